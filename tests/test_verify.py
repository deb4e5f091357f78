"""Each claim check on real sentences of the seed abstracts: a true paraphrase passes, the
corrupted one fails, and the failure says why."""

import json

import numpy as np
import pytest

from rag.answer.trust import (
    RULES,
    Checked,
    Drafted,
    Trust,
    check_direction,
    check_names,
    check_numbers,
    check_polarity,
    has_claim,
    is_refusal,
    restates_question,
    unstated_focus,
)
from rag.answer.trust import check_answer as _check_answer
from rag.question import read as parse
from rag.search.evidence import evidence_for
from rag.settings import TrustSettings
from rag.text import content_words
from rag.types import AnswerSentence, Citation, Paper
from tests.conftest import SEEDS
from tests.fakes import FakeEmbedder

PAPERS = {row["id"]: Paper(row["id"], row["abstract"], title=row["title"]) for row in map(json.loads, (SEEDS / "papers.jsonl").read_text().splitlines())}  # fmt: skip
ABSTRACTS = {pid: paper.abstract for pid, paper in PAPERS.items()}
RRM = "Our RRM improves the performance of a pairwise reward model trained on Gemma-2-9b-it, on Reward-Bench, increasing accuracy from 80.61% to 84.15%."  # fmt: skip
TEAL = "We improve existing sparse kernels and demonstrate wall-clock decoding speed-ups of up to 1.53× and 1.8× at 40\\% and 50\\% model-wide sparsity."  # fmt: skip
BIRDSET = "BirdSet surpasses AudioSet with over 6,800 recording hours ($\\uparrow17\\%$) from nearly 10,000 classes ($\\uparrow18\\times$) for training and more than 400 hours ($\\uparrow7\\times$) across eight strongly labeled evaluation datasets."  # fmt: skip
SINKS = "After relaxing such dependence by replacing softmax attention with other attention operations, such as sigmoid attention without normalization, attention sinks do not emerge in LMs up to 1B parameters."  # fmt: skip
TIME_MOE = "By leveraging a sparse mixture-of-experts (MoE) design, Time-MoE enhances computational efficiency by activating only a subset of networks for each prediction, reducing computational load while maintaining high model capacity."  # fmt: skip


def check_answer(draft, evidence, embedder, trust, question="", confirm=None):
    """`trust.check_answer` on the question as parsed."""
    return _check_answer(draft, evidence, embedder, trust, parse(question), confirm)


def test_the_sentences_are_real_seed_sentences():
    text = " ".join(ABSTRACTS.values())
    for sentence in (RRM, TEAL, BIRDSET, SINKS, TIME_MOE):
        assert sentence in text


@pytest.mark.parametrize(
    ("claim", "source", "passed"),
    [
        ("RRM raises Reward-Bench accuracy from 80.61% to 84.15%.", RRM, True),
        ("RRM raises Reward-Bench accuracy from 80.61% to 89.15%.", RRM, False),
        ("TEAL speeds up decoding by up to 1.53x at 40 % sparsity.", TEAL, True),  # × = x, "40 %" = "40%"
        ("TEAL speeds up decoding by up to 1.63x at 40% sparsity.", TEAL, False),
        ("BirdSet has over 6800 recording hours.", BIRDSET, True),  # 6,800 = 6800
        ("BirdSet has over 6,900 recording hours.", BIRDSET, False),
        ("MoEE is better than either one alone.", RRM, True),  # "one" is not a claimed number
    ],
)
def test_numbers(claim, source, passed):
    check = check_numbers(claim, source)
    assert check.passed is passed
    if not passed:
        assert "89.15" in check.detail or "1.63" in check.detail or "6900" in check.detail


SCORES = "The model reaches 71.2% accuracy on ImageNet and 48.5% on ObjectNet, using two encoders and six decoders."


@pytest.mark.parametrize(
    "claim,passed",
    [
        ("The model reaches 71.2% accuracy on ImageNet.", True),
        ("On ObjectNet the model reaches 48.5%.", True),  # the words before a number are not checked
        ("The model uses six decoders and two encoders.", True),  # reordered, each number kept
        ("The model reaches 48.5% accuracy on ImageNet.", False),  # another number's quantity
        ("The model uses six encoders.", False),
        (
            "The model reaches 71.2% top-1 on a new benchmark.",
            True,
        ),  # words the source never ties to a number
    ],
)
def test_quantities_a_number_keeps_what_it_measures(claim, passed):
    from rag.answer.trust.checks import check_quantities

    check = check_quantities(claim, SCORES)
    assert check.passed is passed, check
    if not passed:
        assert "the source gives" in check.detail


@pytest.mark.parametrize(
    ("claim", "source", "passed"),
    [
        ("The RRM was trained on Gemma-2-9b-it.", RRM, True),
        ("The RRM was trained on Llama-3-8B.", RRM, False),
        ("Time-MoE uses a sparse MoE design.", TIME_MOE, True),
        ("Time-MoE uses Adam-mini to reduce computational load.", TIME_MOE, False),
        (
            "Time-MoE keeps high model capacity in large language models (LLMs).",
            TIME_MOE + " large language models",
            True,
        ),
        ("BirdSet surpasses the Waymo Open Dataset in recording hours.", BIRDSET, False),
    ],
)
def test_names(claim, source, passed):
    check = check_names(claim, source)
    assert check.passed is passed, check.detail
    if not passed:
        assert "Llama-3-8B" in check.detail or "Adam-mini" in check.detail or "Waymo" in check.detail


@pytest.mark.parametrize(
    ("claim", "source", "passed"),
    [
        ("With sigmoid attention without normalization, attention sinks do not emerge in LMs up to 1B parameters.", SINKS, True),
        ("With sigmoid attention without normalization, attention sinks still emerge in LMs up to 1B parameters.", SINKS, False),
        ("The RRM does not improve the performance of the pairwise reward model.", RRM, False),
        ("Time-MoE fails to activate a subset of networks for each prediction.", TIME_MOE, False),
        ("Time-MoE activates only a subset of its networks for each prediction.", TIME_MOE, True),
    ],
)  # fmt: skip
def test_polarity(claim, source, passed):
    assert check_polarity(claim, source).passed is passed


@pytest.mark.parametrize(
    ("claim", "source", "passed"),
    [
        ("Time-MoE reduces the computational load while keeping high model capacity.", TIME_MOE, True),
        ("Time-MoE increases the computational load while maintaining high model capacity.", TIME_MOE, False),
        ("RRM increases Reward-Bench accuracy from 80.61% to 84.15%.", RRM, True),
        ("RRM decreases Reward-Bench accuracy from 80.61% to 84.15%.", RRM, False),
        ("RRM changes Reward-Bench accuracy from 84.15% to 80.61%.", RRM, False),  # from-to reversed
    ],
)
def test_direction(claim, source, passed):
    assert check_direction(claim, source).passed is passed


BEATS = "By modeling heterogeneity, KALE outperforms Transformer-based policies in sample efficiency."


@pytest.mark.parametrize(
    ("claim", "passed"),
    [
        ("KALE outperforms Transformer-based policies in sample efficiency.", True),
        ("In sample efficiency, Transformer-based policies are outperformed by KALE.", True),
        ("KALE is outperformed by Transformer-based policies in sample efficiency.", False),
        ("Transformer-based policies outperform KALE in sample efficiency.", False),
        ("Transformer-based policies are better than KALE.", False),
    ],
)
def test_direction_who_outperforms_whom(claim, passed):
    check = check_direction(claim, BEATS)
    assert check.passed is passed, check
    if not passed:
        assert "outperforms whom" in check.detail


def test_a_count_in_words_is_a_number_of_the_claim():
    assert not check_numbers("The model uses five encoders.", SCORES).passed
    assert check_numbers("The model uses 2 encoders and 6 decoders.", SCORES).passed
    assert check_numbers("The model uses two encoders.", SCORES).passed
    assert check_numbers("MoEE beats either one alone.", RRM).passed  # "one" counts nothing


def test_coverage_asks_for_most_words_and_exactly_half_is_not_most():
    from rag.answer.trust import check_coverage
    from rag.text import content_words

    # Another paper's sentence (patch-level training) against TEAL's abstract: 4 of its 8 content
    # words occur there ("training-free", "tokens", "reducing", "multiplications").
    claim = content_words(
        "Patch-level training aggregates multiple tokens into a patch to reduce training costs."
    )
    teal = ABSTRACTS["dGVZwyq5tV"]
    assert len(claim & content_words(teal)) * 2 == len(claim)
    assert not check_coverage(claim, teal, 0.5).passed
    assert "(50% are)" in check_coverage(claim, teal, 0.5).detail
    assert check_coverage(claim, teal, 0.49).passed
    # A sentence of TEAL's own abstract has all of its words there.
    assert check_coverage(content_words(TEAL), teal, 0.5).passed


def test_similarity_flags_another_papers_sentence_and_no_check_is_skipped_for_short_claims():
    emb = FakeEmbedder()
    from rag.types import Paper

    paper = Paper("88AS5MQnmC", ABSTRACTS["88AS5MQnmC"], title="RRM")
    ev = evidence_for(paper, emb)
    trust = Trust.of(support_threshold=0.3)

    def verdict(claim):
        return trust.verify(claim, np.asarray(emb.embed(claim)), ev, whole=True)

    assert verdict(RRM).passed
    other = verdict("Patch-level training aggregates multiple tokens into a patch to cut training costs.")
    assert not other.passed and {c.name for c in other.failed} - {"decision"} == {"coverage", "similarity"}
    # A two-word claim with a wrong number is still checked.
    assert not verdict("Accuracy 91.2%.").passed
    assert not has_claim("Yes.") and has_claim("Accuracy 91.2%.")
    every = ["numbers", "quantities", "names", "polarity", "direction", "coverage", "similarity"]
    assert [c.name for c in verdict(RRM).checks] == every
    less = trust.without("names").verify(RRM, np.asarray(emb.embed(RRM)), ev)
    assert [c.name for c in less.checks] == [n for n in every if n != "names"]


def test_refusal_rules():
    assert is_refusal("The provided sources do not mention the optimizer.")
    assert is_refusal("Time-MoE's optimizer is not stated in the abstract.")
    assert not is_refusal("Time-MoE uses a sparse mixture-of-experts design [1].")
    assert unstated_focus(parse("How many GPUs were used to train Time-MoE?"), [ABSTRACTS["e1wDDFmlVu"]]) == [
        "GPUs"
    ]
    assert (
        unstated_focus(parse("How many recording hours does BirdSet have?"), [ABSTRACTS["dRXxFEY8ZE"]]) == []
    )
    # Asking for a paper, "how many X" says what the paper does: the answer is the paper, not a count.
    rank_paper = "Is there a paper that picks how many GPUs each layer of Time-MoE gets?"
    assert unstated_focus(parse(rank_paper), [ABSTRACTS["e1wDDFmlVu"]]) == []


@pytest.mark.parametrize(
    "question,refused",
    [
        ("Which four benchmarks evaluate the retrieval memory?", True),  # the title is not a benchmark
        ("Which paper evaluates a retrieval memory on four benchmarks?", False),  # the title is the answer
    ],
)
def test_a_title_answers_only_a_question_that_asks_for_a_paper(question, refused):
    title = "Memory Retrieval for Long Videos"
    said = _shown(f"The four benchmarks evaluating the retrieval memory are “{title}” [1].")
    cited = [Citation(1, "p1", title, "", [], "", 0, 0, 1.0)]
    assert restates_question(parse(question), Checked("", said, [], cited, 0, ["x"])) is refused


def test_numbers_derived_from_the_source_by_arithmetic_pass():
    assert check_numbers("RRM improves accuracy by 3.54 points, from 80.61% to 84.15%.", RRM).passed
    assert not check_numbers("RRM improves accuracy by 4.54 points, from 80.61% to 84.15%.", RRM).passed
    assert not check_numbers("RRM improves accuracy by 3.54 points.", RRM).passed  # operands not shown


def _shown(*texts: str) -> list[AnswerSentence]:
    return [AnswerSentence(t, [1], True, 0.9) for t in texts]


def test_an_answer_that_only_repeats_the_question_is_refused():
    # Real drafts of the default model (dev split) for details the abstracts do not give.
    question = "What sampling temperature is used in the Best-of-N aware fine-tuning experiments?"
    echo = _shown("The sampling temperature is used in the Best-of-N aware fine-tuning experiments [1].")
    checked = Checked("", echo, [], [], 0, ["x"])
    assert restates_question(parse(question), checked)
    # A signal the selector reads, not a refusal of its own.
    rule = RULES["restates_question"](TrustSettings())
    assert rule.refuse(Drafted("x", checked, parse(question))).code == "restates_question"
    # One word the question did not say is an answer; so is a yes/no question answered in its words.
    said = _shown("The experiments sample at temperature 0.7 [1].")
    assert not restates_question(parse(question), Checked("", said, [], [], 0, ["x"]))
    yes = _shown("Provable unlearning in topic models works without retraining the whole model [1].")
    assert not restates_question(
        parse("Does provable unlearning in topic models work without retraining the whole model?"),
        Checked("", yes, [], [], 0, ["x"]),
    )


def test_a_quoted_or_hyphenated_term_is_new_even_when_made_of_stop_words():
    question = "What two broad strategies for producing explanations are tested for identifiability?"
    named = _shown(
        'The two broad strategies tested for identifiability are "where-then-what" and "what-then-where" [1].'
    )
    assert not restates_question(parse(question), Checked("", named, [], [], 0, ["x"]))
    echo = _shown("The two broad strategies for producing explanations are tested for identifiability [1].")
    assert restates_question(parse(question), Checked("", echo, [], [], 0, ["x"]))
    # A term with content words is judged by them: "fine-tuned" is the question's "fine-tune".
    asked = "Which pretrained language model did the LoRA gradient-dynamics paper fine-tune?"
    echo = _shown("The LoRA gradient-dynamics paper fine-tuned a pretrained language model [1].")
    assert restates_question(parse(asked), Checked("", echo, [], [], 0, ["x"]))


def test_a_negation_the_question_asserts_is_its_premise_not_the_answers_claim():
    source = "We also study a single self-attention layer in learning relatively simpler deterministic walks."
    claim = "The layer fails to learn the simpler task of deterministic walks."
    assert not check_polarity(claim, source).passed
    assert check_polarity(claim, source, "What simpler task does the layer fail to learn?").passed
    # The question's negation does not excuse a negation of something else.
    flipped = "The method does not improve accuracy."
    assert not check_polarity(flipped, "The method improves accuracy.", "Does it fail to learn walks?").passed


def test_a_scaled_number_equals_it_written_out_and_hyphenated_numbers_measure_nothing():
    assert check_numbers("It has 349,000 image pairs.", "A dataset of 349K image pairs.").passed
    assert check_numbers("It has 349K image pairs.", "A dataset of 349,000 image pairs.").passed
    assert not check_numbers("It has 349 image pairs.", "A dataset of 349,000 image pairs.").passed
    from rag.answer.trust.checks import check_quantities

    source = "A top-1 accuracy of 99.2% on PPG retrieval, and 80.1% on ECG."
    assert check_quantities("It reaches 99.2% on PPG retrieval.", source).passed
    assert not check_quantities("It reaches 80.1% on PPG retrieval.", source).passed


SCOPE, DIAGRAMS, TIME_MOE_PAPER = PAPERS["dTkqaCKLPp"], PAPERS["dqyuCsBvn9"], PAPERS["e1wDDFmlVu"]
MUSIC = "How do diffusion models generate music from song lyrics?"
TOXICITY = "How do graph neural networks handle molecular property prediction for drug toxicity?"


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("SUPPORTED", "supported"),
        ("Contradicted.", "contradicted"),
        ("UNSTATED", "unstated"),
        ("maybe", None),
    ],
)
def test_the_model_stance_on_a_claim_is_read_from_its_one_word_reply(reply, expected):
    from rag.answer.verdicts import stance
    from tests.fakes import FakeLLM

    llm = FakeLLM([reply])
    got = stance(
        llm, "TEAL needs no training [1].", "TEAL", "TEAL is training-free and reaches 40\\% sparsity."
    )
    assert (got.value if got else None) == expected
    prompt = llm.prompts[0][1]["content"]
    # The abstract comes before the claim (its tokens are reused for the next claim on the paper),
    # as plain text, and the claim without its marker.
    assert prompt.index("training-free") < prompt.index("TEAL needs no training")
    assert "40%" in prompt and "[1]" not in prompt


@pytest.mark.parametrize(
    "said,supported", [("contradicted", False), ("unstated", False), ("supported", True)]
)
def test_verify_gives_the_models_verdict_after_the_rules_pass(indexed, embedder, said, supported):
    from rag.answer.trust import Stance, Trust
    from rag.answer.verify import ClaimInput, ClaimVerifier

    asked = []

    def entail(claim, passage, ev):
        asked.append(ev.paper.id)
        return Stance(said)

    verifier = ClaimVerifier(indexed, embedder, Trust(), entail=entail)
    result = verifier.check(
        ClaimInput("c", "Knowledge entropy declines as pretraining advances.", "p-entropy")
    )
    assert asked == ["p-entropy"] and result.verdict == said and result.supported is supported
    assert result.to_json()["verdict"] == said and result.passage  # the sentence it rests on
    # A claim the rules already fail is not put to the model.
    asked.clear()
    failed = verifier.check(ClaimInput("d", "Knowledge entropy declines by 97.5 percent.", "p-entropy"))
    assert not failed.supported and asked == [] and failed.verdict == ""


def test_with_the_verdict_on_the_model_judges_negation_instead_of_the_word_check():
    from rag.answer.trust import Trust

    emb = FakeEmbedder()
    claim = "TEAL needs no training to sparsify activations."
    ev = evidence_for(
        Paper("t", "TEAL is a training-free method that sparsifies activations.", title="TEAL"), emb
    )
    words_only = Trust().verify(claim, np.asarray(emb.embed(claim)), ev, whole=True)
    with_model = Trust.of(checks=[*Trust().checks, "entailment"]).verify(
        claim, np.asarray(emb.embed(claim)), ev, whole=True
    )
    assert "polarity" in [c.name for c in words_only.checks]
    assert "polarity" not in [c.name for c in with_model.checks]


def test_the_questions_own_numbers_names_and_words_are_never_held_against_the_source():
    from rag.answer.trust.checks import check_coverage, check_names, check_numbers

    question = "Which two gradient methods match the complexity without knowing L0 and L1?"
    claim = ("The two gradient methods that get almost the same complexity guarantees without "
             "knowing L0 and L1 are the Polyak stepsizes method and the normalized gradient method.")  # fmt: skip
    source = ("We show that gradient descent with Polyak stepsizes and normalized gradient descent "
              "achieve nearly the same complexity without any knowledge of the smoothness constants.")  # fmt: skip
    # Read alone, "two" is the number 2 and L0, L1 are names the source does not hold.
    assert not check_numbers(claim, source).passed
    assert not check_names(claim, source).passed
    # The question said them: the user's words, not the answer's claims.
    assert check_numbers(claim, source, question).passed
    assert check_names(claim, source, question=question).passed
    assert check_coverage(content_words(claim), source, 0.5, content_words(question)).passed
    # A number the question does not say is still checked.
    assert not check_numbers(
        "The three methods are Polyak stepsizes and normalized GD.", source, question
    ).passed


def test_a_sentence_that_only_restates_the_question_gets_no_words_from_it():
    from rag.answer.trust.base import Claim

    question = "Which papers decouple LoRA updates for class incremental learning?"
    # As the checks read them: without citation markers.
    restating = "The papers that decouple LoRA updates for class incremental learning are these."
    answering = "The method decouples LoRA updates into magnitude and direction."
    claim = Claim(restating, frozenset(content_words(restating)), question=question)
    assert claim.users == ""  # that its papers fit the question is its claim: checked on the source
    told = Claim(answering, frozenset(content_words(answering)), question=question)
    assert told.users == question
    # "Yes" adds no claim of its own: the sentence still only restates the question.
    question = "Is there a paper on continual learning that separates LoRA magnitude from direction?"
    restating = "Yes, there is a paper on continual learning that separates LoRA magnitude from direction."
    assert Claim(restating, frozenset(content_words(restating)), question=question).users == ""
