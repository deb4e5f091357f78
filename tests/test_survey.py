"""Survey answers: every paper that fits a "which papers ...?" question, within the filters it states."""

import pytest

from rag.answer.listing import listing_sentence
from rag.index.ingest import ingest
from rag.question import Kind, parse
from rag.search.survey import Survey, phrases
from tests.conftest import make_pipeline, write_jsonl

TOPICS = {
    "k-1": ("oral", "Spline Networks", "We build Kolmogorov-Arnold networks (KANs) for tabular data."),
    "k-2": ("poster", "Sparse KANs", "Kolmogorov-Arnold networks learn activations on edges."),
    "k-3": (
        "oral",
        "Fast Trees",
        "Gradient boosted trees; unlike Kolmogorov-Arnold networks, they need no splines.",
    ),
    "s-1": ("oral", "Segmenting cells", "We adapt the Segment Anything Model (SAM) to microscopy images."),
    "s-2": ("poster", "Flat minima", "Sharpness-aware minimization (SAM) finds flat minima of the loss."),
    "s-3": ("rejected", "Flat minima again", "We analyse SAM and sharpness of the loss surface."),
    "d-1": ("oral", "Backdoors", "A new backdoor attack on vision models that hides in the weights."),
    "d-2": ("poster", "Defending", "A backdoor defence that removes triggers from trained models."),
    "o-1": ("poster", "Unrelated", "We study protein folding with language models."),
}


@pytest.fixture
def conference(tmp_path, store, embedder):
    folder = tmp_path / "conference"
    folder.mkdir()
    rows = [
        {"id": pid, "title": title, "abstract": abstract, "status": status, "primary_area": "optimization"
         if pid.startswith("s") else "generative models"}
        for pid, (status, title, abstract) in TOPICS.items()
    ]  # fmt: skip
    write_jsonl(folder / "conference.jsonl", rows)
    ingest([folder], store, embedder, chunk_tokens=60)
    return store


@pytest.mark.parametrize(
    "question,topic,filters,counting",
    [
        ("Which papers use Kolmogorov-Arnold networks?", "Kolmogorov-Arnold networks", {}, False),
        ("Which oral papers study machine unlearning?", "machine unlearning", {"status": ("oral",)}, False),
        ("What is there on speculative decoding?", "speculative decoding", {}, False),
        ("List the papers on graph transformers.", "graph transformers", {}, False),
        (
            "How many accepted papers use diffusion models?",
            "diffusion models",
            {"status": ("oral", "spotlight", "poster")},
            True,
        ),  # fmt: skip
        (
            "Which papers in the optimization area study bilevel optimization?",
            "bilevel optimization",
            {"area": ("optimization",)},
            False,
        ),  # fmt: skip
        (
            "Which rejected submissions work with point clouds?",
            "point clouds",
            {
                "status": ("submitted",)
            },  # OpenReview's word for a rejected paper; "rejected" is a desk rejection
            False,
        ),  # fmt: skip
    ],
)
def test_a_survey_question_is_parsed_into_its_topic_and_filters(question, topic, filters, counting):
    intent = parse(question)
    assert intent.kind is Kind.SEVERAL_PAPERS
    assert (intent.topic, intent.filters, intent.counting) == (topic, filters, counting)


def test_filter_words_are_only_filters_before_a_word_for_papers():
    assert parse("What does oral dosing change?").filters == {}
    assert parse("Which posters study graphs?").filters == {"status": ("poster",)}


def test_phrases_of_a_topic():
    assert phrases("sharpness-aware minimization (SAM)") == (["sharpness-aware minimization"], ["SAM"])
    assert phrases("backdoor attacks or defences") == (["backdoor attacks", "backdoor defences"], [])
    assert phrases("Mamba") == (["Mamba"], [])


def test_every_paper_naming_the_topic_is_listed_within_the_stated_filters(conference):
    survey = Survey(conference)
    kans = {h.paper.id for h in survey.find(parse("Which papers use Kolmogorov-Arnold networks?"))}
    assert kans == {"k-1", "k-2", "k-3"}
    orals = survey.find(parse("Which oral papers use Kolmogorov-Arnold networks?"))
    assert {h.paper.id for h in orals} == {"k-1", "k-3"} and all(h.paper.status == "oral" for h in orals)
    # The acronym counts only beside a word of its long form: the Segment Anything paper is not listed.
    sam = {h.paper.id for h in survey.find(parse("Which papers use sharpness-aware minimization (SAM)?"))}
    assert sam == {"s-2", "s-3"}
    both = {h.paper.id for h in survey.find(parse("Which papers study backdoor attacks or defences?"))}
    assert both == {"d-1", "d-2"}
    area = survey.find(parse("Which papers in the optimization area use sharpness-aware minimization (SAM)?"))
    assert {h.paper.id for h in area} == {"s-2", "s-3"}
    assert (
        survey.find(parse("Which papers in the generative models area use sharpness-aware minimization?"))
        == []
    )
    # The sentence shown is the one that names the topic.
    first = survey.find(parse("Which papers use Kolmogorov-Arnold networks?"))[0]
    assert "Kolmogorov-Arnold" in first.sentence


def test_the_list_is_an_event_before_the_draft_and_part_of_the_answer(conference, embedder):
    from rag.answer.events import PreviewEvent, SurveyEvent, TokenEvent

    pipeline, _ = make_pipeline(conference, embedder, ["Kolmogorov-Arnold networks learn activations [1]."])
    events = list(pipeline.stream("How many oral papers use Kolmogorov-Arnold networks?"))
    kinds = [type(e) for e in events]
    assert kinds.index(SurveyEvent) < kinds.index(TokenEvent) and kinds.index(SurveyEvent) < kinds.index(
        PreviewEvent
    )
    answer = events[-1].answer
    assert answer.listing.startswith("2 indexed papers (status: oral)")
    assert {p["paper_id"] for p in answer.to_json()["papers"]} == {"k-1", "k-3"}
    assert {r.paper.id for r in answer.retrieved} <= {"k-1", "k-3"}  # the model reads listed papers


def test_the_listing_sentence_says_the_count_and_the_filters():
    intent = parse("Which spotlight papers use flow matching?")
    assert listing_sentence(intent, []) == "No indexed paper (status: spotlight) is about “flow matching”."


def test_a_question_describing_what_papers_do_is_no_survey():
    intent = parse("Which papers study how pretraining data is selected or how knowledge is acquired?")
    assert intent.kind is Kind.SEVERAL_PAPERS and intent.topic == ""


def test_a_list_without_a_backed_summary_is_still_shown_with_the_closest_papers(conference, embedder):
    from ui.render import render_answer

    pipeline, _ = make_pipeline(conference, embedder, ["The moon is made of cheese [1]."])
    answer = pipeline.ask("Which papers use Kolmogorov-Arnold networks?")
    assert not answer.abstained and not answer.sentences and len(answer.papers) == 3
    html = render_answer(answer, "m1")
    assert (
        "3 indexed papers are about" in html and "No summary of the list" in html and "Closest papers" in html
    )


class _Judge:
    """A fake membership judge: p(about) 0.9 for a sentence holding `word`, else 0.1."""

    def __init__(self, word: str):
        self.word = word
        self.asked: list[str] = []

    def scores(self, question, texts):
        self.asked.append(question)
        return [0.9 if self.word in f"{t} {s}".lower() else 0.1 for t, s in texts]


def _membership(embedder, word):
    from rag.search.membership import Membership

    class _Vectors:  # each sentence's vector by the fake embedder, as the store keeps them
        def vectors(self, papers, embed):
            import numpy as np

            from rag import text as tx

            return [
                np.asarray(embed([p.abstract[a:b] for a, b in tx.sentence_spans(p.abstract)])) for p in papers
            ]

    return Membership(_Judge(word), embedder.embed_batch, _Vectors(), keep=0.5)


def test_the_judge_keeps_papers_about_the_topic_and_counts_the_near_misses(conference, embedder):
    # k-3 names Kolmogorov-Arnold networks only to say trees need no splines: the judge cuts it.
    survey = Survey(
        conference, _membership(embedder, "learn activations"), dense=lambda q, f: [], max_candidates=50
    )
    listed = survey.listing(parse("Which papers use Kolmogorov-Arnold networks?"))
    assert [h.paper.id for h in listed.hits] == ["k-2"] and {h.paper.id for h in listed.cut} == {"k-1", "k-3"}
    assert all(h.p is not None for h in listed.hits + listed.cut)
    assert survey.membership.judge.asked == ["Which papers study Kolmogorov-Arnold networks?"]


def test_dense_search_adds_candidates_the_judge_reads(conference, embedder):
    # "o-1" names no word of the topic; dense search offers it and the judge keeps it.
    survey = Survey(
        conference, _membership(embedder, "protein"), dense=lambda q, f: ["o-1"], max_candidates=50
    )
    listed = survey.listing(parse("Which papers use Kolmogorov-Arnold networks?"))
    assert [h.paper.id for h in listed.hits] == ["o-1"]
    assert "o-1" not in {h.paper.id for h in listed.cut}  # a dense candidate cut is no near-miss


def test_the_listing_sentence_says_what_was_cut_relaxed_and_cannot_be_applied():
    intent = parse("Which papers study model editing?")
    text = listing_sentence(
        intent, [], cut=3, relaxed=["model editing -> editing"], unknown=["venue neurips 2024"]
    )
    assert "No indexed paper has venue neurips 2024" in text
    assert "“model editing” as written (searched “editing”)" in text
    assert "3 more papers mention it but are not about it" in text
    rejected = parse("Which rejected papers study model editing?")
    assert "(status: rejected)" in listing_sentence(
        rejected, []
    )  # the data's "submitted", in a reader's words


def test_a_phrase_is_searched_whole_before_any_word_is_dropped(conference):
    survey = Survey(conference)
    found = survey.candidates(parse("Which papers study backdoor attacks?"), {})
    assert (
        set(found.counts) == found.core == {"d-1"} and found.relaxed == []
    )  # "backdoor defence" is not "backdoor attacks"


def test_the_page_shows_the_near_misses_behind_show_more(conference, embedder):
    from ui.render import render_list

    survey = Survey(
        conference, _membership(embedder, "learn activations"), dense=lambda q, f: [], max_candidates=50
    )
    listed = survey.listing(parse("Which papers use Kolmogorov-Arnold networks?"))
    html = render_list("1 indexed paper is about it:", listed.hits, (), listed.cut)
    assert "show 2 more" in html and "Fast Trees" in html.split("show 2 more")[1]
    assert "Fast Trees" not in html.split("show 2 more")[0]
