"""Papers like this one: nearest by meaning, the paper itself left out, each with its nearest sentence."""

import pytest

from rag.index.ingest import ingest
from rag.index.store import StoreError
from rag.search.similar import similar
from tests.conftest import PAPERS, write_jsonl

NEAR = [
    {
        "id": "p-entropy-2",
        "title": "Entropy of Knowledge in Pretraining",
        "abstract": "Knowledge entropy of language models changes during pretraining. We measure knowledge "
        "entropy decline and its effect on retention. Unrelated closing words about gardens.",
    },
]


@pytest.fixture
def more(tmp_path, store, embedder):
    folder = tmp_path / "more"
    folder.mkdir()
    write_jsonl(folder / "p.jsonl", PAPERS + NEAR)
    ingest([folder], store, embedder, chunk_tokens=60)
    return store


def test_the_nearest_paper_comes_first_with_its_nearest_sentence(more, embedder):
    paper, found = similar(more, embedder, None, "p-entropy", k=3)
    assert paper.id == "p-entropy"
    assert [s.paper.id for s in found][0] == "p-entropy-2"
    assert "p-entropy" not in {s.paper.id for s in found}
    assert found[0].sentence in NEAR[0]["abstract"] and "gardens" not in found[0].sentence
    assert [s.similarity for s in found] == sorted((s.similarity for s in found), reverse=True)
    assert found[0].to_json()["paper_id"] == "p-entropy-2"


def test_an_unknown_id_is_a_clear_error(more, embedder):
    with pytest.raises(StoreError, match="No paper with id 'nope'"):
        similar(more, embedder, None, "nope")


def test_papers_like_a_title_in_the_chat_are_the_nearest_without_the_model(more, embedder):
    from tests.conftest import make_pipeline
    from ui.render import render_answer

    pipeline, llm = make_pipeline(more, embedder)
    answer = pipeline.ask("Papers like “Knowledge Entropy Decay”")
    assert answer.intent.kind.value == "similar" and not answer.abstained and llm.prompts == []
    assert answer.similar[0].paper.id == "p-entropy-2"
    assert "p-entropy" not in [s.paper.id for s in answer.similar]  # not the paper itself
    assert answer.text.startswith("The 3 indexed papers nearest “Knowledge Entropy Decay”")
    page = render_answer(answer, "m1")
    assert "Entropy of Knowledge in Pretraining" in page and answer.similar[0].sentence[:30] in page


def test_a_title_nobody_wrote_finds_no_paper_rather_than_a_wrong_one(more, embedder):
    from tests.conftest import make_pipeline

    pipeline, _ = make_pipeline(more, embedder)
    answer = pipeline.ask("What papers are similar to Quantum Origami Bakery?")
    assert answer.abstained and answer.similar == []
    assert answer.text.startswith("No indexed paper is titled like “Quantum Origami Bakery”")


def test_every_cited_source_carries_a_similar_papers_button():
    from rag.types import Answer, Citation, Timings
    from ui.render import render_answer

    cite = Citation(1, "p1", "A <Title>", "https://x", ["f#0"], "passage", 0, 7, 0.9)
    answer = Answer("q", "Text [1].", [cite], [], False, [], Timings())
    page = render_answer(answer, "m1")
    assert '<button class="cw-like">similar papers</button>' in page
    assert '<pre class="cw-like-q">Papers like “A &lt;Title&gt;”</pre>' in page
