"""Which-paper answers in the question's own words: recognized, checked against the paper named
(fit + the model's confirmation), and shown as that paper's quoted sentence, never as the
restatement. Real seed abstracts; the embedder is the deterministic fake, so the fit threshold is
set to 0 where a test is about the confirmation."""

import json

from rag.answer.clean import clean_draft
from rag.answer.stages import judge
from rag.answer.trust import Trust, check_answer
from rag.question import read as parse
from rag.search.evidence import evidence_for
from rag.settings import Settings
from rag.types import Paper
from tests.conftest import SEEDS
from tests.fakes import FakeEmbedder

ROWS = {r["id"]: r for r in map(json.loads, (SEEDS / "papers.jsonl").read_text().splitlines())}
SD_LORA = "5U1rlpX68A"
WASHING = "dXCpPgjTtd"
ON = Trust.of(min_paper_fit=0.0)  # paper_fit is among the default checks
QUESTION = "Is there a paper on continual learning that separates how large LoRA updates are from which way they point?"  # fmt: skip
# The default model's draft for that question.
DRAFT = (
    "Yes, there is a paper on continual learning that separates how large LoRA updates are from which way they point. "
    'It is titled "SD-LoRA: Scalable Decoupled Low-Rank Adaptation for Class Incremental Learning" and can be found in source [1].'
)


def _source(pid: str, number: int = 1):
    row = ROWS[pid]
    return evidence_for(Paper(pid, row["abstract"], title=row["title"]), FakeEmbedder(), number)


def test_questions_that_ask_for_a_paper_and_what_they_describe():
    asked = parse(QUESTION)
    assert asked.asks_for_paper and not asked.asks_for_papers
    assert asked.described[0].startswith("continual learning that separates")
    which = "Which work shows that networks pruned during training resist blurry pictures?"
    assert parse(which).described[0] == "shows that networks pruned during training resist blurry pictures"
    assert parse("Are there papers on machine unlearning?").asks_for_papers
    assert not parse("Is there a recipe for tuning a 7B chatbot on a small budget?").asks_for_paper
    assert parse("What is PAD?").described[0] == "What is PAD?"


def test_a_sentence_that_names_a_paper_is_not_dropped_as_a_pointer():
    titles = [ROWS[SD_LORA]["title"]]
    assert "It is titled" in clean_draft(DRAFT, titles)
    assert (
        clean_draft("This is stated in the source [1]. Entropy declines [1].", titles)
        == "Entropy declines [1]."
    )


def test_a_confirmed_paper_is_shown_with_its_quoted_sentence_not_the_restatement():
    asked: list[str] = []

    def confirm(ev, question):
        asked.append(ev.paper.id)
        return True

    checked = check_answer(DRAFT, [_source(SD_LORA)], FakeEmbedder(), ON, parse(QUESTION), confirm)
    assert asked == [SD_LORA]
    [shown] = checked.sentences
    assert shown.text.startswith("“SD-LoRA: Scalable Decoupled") and shown.citations == [1]
    assert shown.checks[0].name == "paper_fit" and shown.checks[0].passed
    quoted = shown.text.split("”: “", 1)[1].rstrip("”.")
    assert quoted in ROWS[SD_LORA]["abstract"]
    # The restatement without a citation is still removed, with its failed checks.
    assert [s.text for s in checked.removed] == [DRAFT.split(". ")[0] + "."]
    assert checked.citations[0].paper_id == SD_LORA and checked.supported


def test_a_paper_the_model_does_not_confirm_is_not_shown():
    checked = check_answer(
        DRAFT, [_source(SD_LORA)], FakeEmbedder(), ON, parse(QUESTION), lambda ev, q: False
    )
    assert not checked.sentences and not checked.supported and len(checked.removed) == 2


def test_a_paper_below_the_fit_is_not_put_to_the_model():
    def confirm(ev, question):
        raise AssertionError("the model is asked only about a paper that fits")

    checked = check_answer(
        DRAFT, [_source(SD_LORA)], FakeEmbedder(), ON.with_(min_paper_fit=5.0), parse(QUESTION), confirm
    )
    assert not checked.supported


def test_without_a_confirmer_or_with_the_check_off_nothing_is_rescued():
    plain = check_answer(DRAFT, [_source(SD_LORA)], FakeEmbedder(), ON, parse(QUESTION))
    off = check_answer(DRAFT, [_source(SD_LORA)], FakeEmbedder(), ON.without("paper_fit"),
                       parse(QUESTION), lambda ev, q: True)  # fmt: skip
    assert not plain.supported and not off.supported
    assert "paper_fit" in Settings().trust.checks  # on by default


def test_a_sentence_with_a_claim_of_its_own_is_checked_as_usual():
    draft = "The paper “SD-LoRA: Scalable Decoupled Low-Rank Adaptation for Class Incremental Learning” reaches 99.9% accuracy on ImageNet [1]."  # fmt: skip
    checked = check_answer(draft, [_source(SD_LORA)], FakeEmbedder(), ON, parse(QUESTION), lambda ev, q: True)
    assert not checked.supported and "99.9" in checked.removed[0].why_not


def test_a_confirmed_paper_is_shown_as_its_quote_and_the_restatement_removed():
    # The quoted sentence is in the paper's words, the removed restatement in the question's.
    question = "Is there a paper on making an AI forget a huge amount of memorized facts without hurting its reasoning?"  # fmt: skip
    draft = (
        "Yes, there is a paper on making an AI forget a huge amount of memorized facts without hurting its "
        f'reasoning. It can be found in the source titled "{ROWS[WASHING]["title"]}" [1].'
    )
    checked = check_answer(draft, [_source(WASHING)], FakeEmbedder(), ON, parse(question), lambda ev, q: True)
    [shown] = checked.sentences
    assert shown.checks[0].name == "paper_fit" and checked.removed


def test_a_which_paper_answer_that_names_its_paper_by_the_marker_alone_keeps_it():
    # The default model's habit: the title left out, only [1] says which paper. Asked for a paper,
    # the marker is the answer; asked anything else, a sentence that only points at a source is
    # still dropped.
    question = "Is there a paper on getting a language model to drop a large body of memorized facts while keeping its reasoning?"  # fmt: skip
    draft = f"{question.replace('Is there', 'Yes, there is').rstrip('?')}. It can be found in [1]."
    sources = [_source(WASHING)]
    got = judge(parse(question), draft, sources, FakeEmbedder(), ON, confirm=lambda ev, q: True)
    assert not got.get("abstained") and got["text"].startswith(f"“{ROWS[WASHING]['title']}” [1]: “")
    assert [c.paper_id for c in got["citations"]] == [WASHING]
    plain = clean_draft(draft, [ROWS[WASHING]["title"]])
    assert "found in" not in plain  # without the question's kind the pointer goes, as before
    other = judge(parse("What does LaW update?"), "LaW updates MLP layers [1]. It can be found in [1].",
                  sources, FakeEmbedder(), ON, confirm=lambda ev, q: True)  # fmt: skip
    assert "found in" not in other["text"] and "MLP" in other["text"]


def test_a_restating_list_names_each_paper_measured_against_its_own_alternative():
    # "The papers that do X or Y are [1] and [2].": each listed paper is one of the answers, and
    # fits X or Y, not both at once . Between the fits to the whole description
    # (0.61, 0.50 with the fake embedder) and to each paper's alternative (0.86, 0.72).
    question = "Which papers decouple LoRA updates for class incremental learning or wash large scale knowledge out of LLMs?"  # fmt: skip
    draft = "The papers that decouple LoRA updates for class incremental learning or wash large scale knowledge out of LLMs are [1] and [2]."  # fmt: skip
    sources = [_source(SD_LORA, 1), _source(WASHING, 2)]
    asked: list[tuple[str, str]] = []

    def confirm(ev, alternative):
        asked.append((ev.paper.id, alternative))
        return True

    checked = check_answer(
        draft, sources, FakeEmbedder(), ON.with_(min_paper_fit=0.65), parse(question), confirm
    )
    # The model is asked about the alternative each paper fits, not whether it answers both.
    assert asked == [
        (SD_LORA, "Which papers decouple LoRA updates for class incremental learning?"),
        (WASHING, "Which papers wash large scale knowledge out of LLMs?"),
    ]
    assert [s.citations for s in checked.sentences] == [[1], [2]]
    assert checked.sentences[0].text.startswith("“SD-LoRA") and checked.sentences[1].text.startswith(
        "“Large Scale"
    )
    assert {c.paper_id for c in checked.citations} == {SD_LORA, WASHING}
