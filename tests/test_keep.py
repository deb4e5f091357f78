"""The sentence decision (rag/answer/trust/keep.py): every check is a feature of one learned
decision, none removes a sentence on its own; the question's words are not the sentence's claims;
a sentence not kept says why in words."""

import numpy as np

from rag.answer.trust import Claim, Source, Trust, check_answer
from rag.answer.trust.keep import CLAIM_SIDE, SentenceDecision, features, shipped
from rag.logistic import Logistic
from rag.question import read as parse
from rag.search.evidence import evidence_for
from rag.text import content_words
from rag.types import Check, Paper
from tests.fakes import FakeEmbedder

SOURCE = "RRM raises Reward-Bench accuracy from 80.61% to 84.15% without new labels."


def _features(claim: str, question: str = "", checks: list[Check] | None = None) -> dict[str, float]:
    told = Claim(claim, frozenset(content_words(claim)), question=question)
    return features(told, Source(SOURCE, SOURCE, 0.8, SOURCE), checks or [], 0.8)


def test_each_check_is_a_feature_and_the_question_s_numbers_and_names_are_the_user_s():
    x = _features("RRM raises accuracy to 86.15% on Reward-Bench.", checks=[Check("numbers", False, "")])
    assert x["fail_numbers"] == 1.0 and x["missing_numbers"] > 0
    # "two" and RRM are the question's: not claims the source must hold.
    asked = _features("The two gains of RRM are 80.61% and 84.15%.", "Which two gains does RRM report?")
    assert asked["missing_numbers"] == 0 and asked["missing_names"] == 0
    alone = _features("The two gains of RRM are 80.61% and 84.15%.")
    assert alone["missing_numbers"] > 0  # without the question, "two" is the sentence's own number
    assert set(CLAIM_SIDE) <= set(x)


def _toy(weights: dict[str, float], threshold: float = 0.5) -> SentenceDecision:
    names = tuple(weights)
    zeros = (0.0,) * len(names)
    return SentenceDecision(
        Logistic(names, zeros, (1.0,) * len(names), tuple(weights.values()), 0.0), threshold
    )


def test_the_decision_keeps_above_its_threshold_and_says_why_not_in_words():
    decide = _toy({"fail_numbers": -4.0, "share": 3.0})
    kept = decide.decide({"fail_numbers": 0.0, "share": 0.9})
    assert kept.keep and not kept.why
    gone = decide.decide({"fail_numbers": 1.0, "share": 0.2})
    assert not gone.keep and "a number not in the source" in gone.why and f"{gone.p:.2f}" in gone.why
    # One failing check is a push, not a veto: strong support elsewhere outweighs it.
    assert decide.decide({"fail_numbers": 1.0, "share": 2.0}).keep


def test_the_shipped_decision_loads_with_its_threshold_and_the_setting_moves_it():
    d = shipped()
    assert 0.0 < d.threshold < 1.0 and "fail_numbers" in d.model.features
    assert shipped(0.9).threshold == 0.9
    assert Trust.of(keep_threshold=0.0).decision.threshold == 0.0


def test_a_removed_sentence_carries_the_decision_s_reason_first():
    embedder = FakeEmbedder()
    paper = Paper("p", SOURCE, title="Reward models")
    ev = evidence_for(paper, embedder)
    checked = check_answer("RRM raises accuracy on Reward-Bench to 97.3% with 12 new labels [1].", [ev],
                           embedder, Trust(), parse("How much does RRM raise accuracy?"))  # fmt: skip
    (removed,) = checked.removed
    assert removed.checks[0].name == "decision" and "not kept" in removed.checks[0].detail
    assert "97.3" in removed.why_not  # the numbers check's own detail follows
    # Every sentence kept at threshold 0: the checks alone remove nothing.
    everything = check_answer("RRM raises accuracy on Reward-Bench to 97.3% with 12 new labels [1].", [ev],
                              embedder, Trust.of(keep_threshold=0.0), parse("q"))  # fmt: skip
    assert everything.sentences and not everything.removed
    assert np.isfinite(everything.sentences[0].score)
