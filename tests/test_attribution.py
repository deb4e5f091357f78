"""A sentence about a paper cites that paper: named by its title or by the short name its title
gives ("Judge Decoding"), whatever number the model wrote; a sentence about two cites both."""

from rag.answer.trust import Trust, check_answer
from rag.answer.trust.answers import short_names
from rag.question import read
from rag.search.evidence import evidence_for
from rag.types import Paper

JUDGE = Paper(
    id="p-judge",
    title="Judge Decoding: Faster Speculative Sampling Beyond Alignment",
    abstract="Speculative sampling speeds up generation with a draft model whose tokens a target model "
    "verifies. We show that verification by alignment rejects many good draft tokens. Judge decoding "
    "trains a small judge head on the target model's embeddings to accept tokens that are correct. "
    "It speeds up Llama-3.1-405B by 9x while keeping its quality.",
)
CASCADES = Paper(
    id="p-cascades",
    title="Faster Cascades via Speculative Execution",
    abstract="Cascades defer hard inputs from a small model to a large model. We combine cascades "
    "with speculative execution so that the large model verifies the small model's tokens in parallel. "
    "The combined method gives better cost and quality trade-offs than cascades or speculative execution alone.",
)


def _evidence(embedder):
    return [evidence_for(p, embedder, n) for n, p in enumerate((CASCADES, JUDGE), 1)]


def test_short_names_tell_the_offered_papers_apart(embedder):
    names = short_names(_evidence(embedder))
    assert names[2] == ("Judge Decoding",)  # its title's head
    assert "Faster Cascades" not in " ".join(names[1])  # no head before a colon


def test_a_sentence_naming_a_paper_cites_it_not_the_number_the_model_wrote(embedder):
    draft = "Judge Decoding speeds up Llama-3.1-405B by 9x while keeping its quality [1]."
    checked = check_answer(draft, _evidence(embedder), embedder, Trust.of(), read("What does each speed up?"))
    assert checked.sentences, [s.checks for s in checked.removed]
    cited = {c.number: c.paper_id for c in checked.citations}
    assert [cited[n] for n in checked.sentences[0].citations] == ["p-judge"]


def test_a_sentence_about_two_papers_cites_both(embedder):
    draft = (
        "Judge Decoding and “Faster Cascades via Speculative Execution” both use a large model "
        "to verify tokens of a small model [1]."
    )
    checked = check_answer(draft, _evidence(embedder), embedder, Trust.of(), read("What do they verify?"))
    shown = [s for s in checked.sentences if s.claim]
    cited = {c.number: c.paper_id for c in checked.citations}
    assert shown and {cited[n] for n in shown[0].citations} == {"p-judge", "p-cascades"}


def test_over_a_run_of_survey_answers_every_sentence_naming_a_paper_cites_it():
    """docs/data/attribution-surveys.jsonl: the dev and outside survey questions answered by the
    default pipeline on the whole conference (`python -m eval.attribution`; ids only)."""
    import json

    from tests.conftest import ROOT

    rows = [
        json.loads(line) for line in (ROOT / "docs/data/attribution-surveys.jsonl").read_text().splitlines()
    ]
    with_synthesis = [r for r in rows if r["sentences"]]
    naming = [s for r in rows for s in r["sentences"] if s["names"]]
    assert len(with_synthesis) >= 60 and len(naming) >= 100
    assert [s for s in naming if not set(s["names"]) <= set(s["cites"])] == []
