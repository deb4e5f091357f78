"""Topics as answers: "What are the biggest topics among the orals?" counted on the map."""

import pytest

from rag.index.ingest import ingest
from rag.map.model import Cluster, ConferenceMap, MapPaper
from rag.map.overview import biggest_topics, topics_text
from rag.question import Kind, parse
from tests.conftest import make_pipeline, write_jsonl


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What are the biggest topics among the orals?", Kind.TOPICS),
        ("Which topics are most common?", Kind.TOPICS),
        ("What are the main research areas of the spotlight papers?", Kind.TOPICS),
        ("What is the main topic of SCOPE?", Kind.ONE_PAPER),
        ("How many papers are about graph neural networks?", Kind.SEVERAL_PAPERS),
        ("What are the main results of the paper?", Kind.ONE_PAPER),
    ],
)
def test_a_question_about_the_topics_is_told_apart(question, kind):
    assert parse(question).kind is kind


def test_the_orals_filter_said_in_words_goes_with_a_topics_question():
    assert parse("What are the biggest topics among the orals?").filters == {"status": ("oral",)}


def _map() -> ConferenceMap:
    layout = [("a", 0, 0), ("b", 0, 0), ("c", 0, 1), ("d", 1, 2), ("e", 1, 2), ("f", 1, 2), ("g", 2, 3)]
    papers = [MapPaper(pid, pid, "", "", "", 0.5, 0.5, t, th) for pid, t, th in layout]
    topics = [Cluster(i, [w], 1, 0.5, 0.5) for i, w in enumerate(["graphs", "proteins", "robots"])]
    themes = [
        Cluster(i, [w], 1, 0.5, 0.5, p)
        for i, (w, p) in enumerate([("gnn", 0), ("rewiring", 0), ("folding", 1), ("grasping", 2)])
    ]
    return ConferenceMap("s", papers, topics, themes)


def test_topics_are_counted_within_the_papers_asked_about():
    everything = biggest_topics(_map())
    assert [(t.name, t.papers) for t in everything] == [("graphs", 3), ("proteins", 3), ("robots", 1)]
    graphs = next(t for t in everything if t.name == "graphs")
    assert graphs.themes == [("gnn", 2), ("rewiring", 1)] and graphs.share == pytest.approx(3 / 7)
    some = biggest_topics(_map(), within={"a", "d", "g", "e"})
    assert [(t.name, t.papers) for t in some] == [("proteins", 2), ("graphs", 1), ("robots", 1)]
    text = topics_text(some, {"status": ("oral",)}, 3)
    assert text.startswith("The biggest topics among the 4 indexed papers (status: oral), of 3 topics")
    assert "1. proteins: 2 papers (50%); largest themes: folding (2)" in text
    assert topics_text([], {"status": ("oral",)}, 3).startswith("No indexed paper (status: oral)")


def test_the_pipeline_answers_from_the_map_without_the_model(store, embedder, tmp_path):
    rows = [
        {"id": f"p{i}", "title": f"Paper {i}", "status": "ICLR 2025 Oral" if i < 4 else "ICLR 2025 Poster",
         "abstract": ("Graph rewiring for message passing." if i % 2 else "Protein folding with diffusion.") + f" Case {i}."}
        for i in range(12)
    ]  # fmt: skip
    folder = tmp_path / "in"
    folder.mkdir()
    write_jsonl(folder / "p.jsonl", rows)
    ingest([folder], store, embedder, chunk_tokens=60)
    pipeline, llm = make_pipeline(store, embedder)
    answer = pipeline.ask("What are the biggest topics among the orals?")
    assert sum(t.papers for t in answer.topics) == 4  # the four orals, laid out on first asking
    assert answer.text.startswith("The biggest topics among the 4 indexed papers (status: oral)")
    assert not answer.abstained and llm.prompts == [] and answer.trace[0].stage == "topics"
    from ui.render import render_answer

    page = render_answer(answer, "m1")
    assert '<table class="cw-list cw-topics">' in page and page.count("<tr>") == len(answer.topics) + 1
    everything = pipeline.ask("Which topics are most common?")
    assert sum(t.papers for t in everything.topics) == 12
