"""The answer selector: one decision (draft, quote, refuse) over the answer's signals."""

from __future__ import annotations

import numpy as np

from rag import text as tx
from rag.answer.citations import strip_markers
from rag.answer.select import signals as sg
from rag.answer.select.selector import WEIGHTS, Logistic, Outcome, Selector
from rag.settings import Settings

ENTROPY = "How does knowledge entropy change during pretraining?"
ANSWERS = "Knowledge entropy declines steadily as pretraining advances"


def _logistic(weights: dict[str, float], bias: float = 0.0) -> Logistic:
    names = tuple(weights)
    return Logistic(names, (0.0,) * len(names), (1.0,) * len(names), tuple(weights.values()), bias)


# The sources answer when the best sentence of the draft or of the paper does (and the model
# confirms the draft); the draft is right when its best sentence answers; the quote when the paper's does.
TOY = Selector(
    _logistic({"claim_p_max": 6.0, "judge_top_paper": 6.0, "verdict_supported": 2.0}, -5.0),
    _logistic({"claim_p_max": 8.0}, -4.0),
    _logistic({"judge_top_paper": 8.0}, -4.0),
    threshold=0.5,
)


def test_the_three_outcomes_follow_the_probabilities():
    assert TOY.decide({"claim_p_max": 0.9, "judge_top_paper": 0.9}).outcome is Outcome.DRAFT
    assert TOY.decide({"claim_p_max": 0.1, "judge_top_paper": 0.9}).outcome is Outcome.QUOTE
    assert TOY.decide({"claim_p_max": 0.1, "judge_top_paper": 0.1}).outcome is Outcome.REFUSE
    # No sentence of the question's paper to quote: the draft, the only answer there is.
    assert TOY.decide({"claim_p_max": 0.1, "judge_top_paper": 0.9}, can_quote=False).outcome is Outcome.DRAFT


def test_one_threshold_sets_the_trade_off():
    x = {"claim_p_max": 0.5, "judge_top_paper": 0.3}  # p(the sources answer) = sigmoid(-0.2) = 0.45
    assert Selector(TOY.answers, TOY.draft, TOY.quote, threshold=0.4).decide(x).outcome is Outcome.DRAFT
    assert Selector(TOY.answers, TOY.draft, TOY.quote, threshold=0.5).decide(x).outcome is Outcome.REFUSE


def test_a_decision_says_which_features_moved_it():
    decision = TOY.decide({"claim_p_max": 0.1, "judge_top_paper": 0.05})
    assert decision.outcome is Outcome.REFUSE and decision.why
    assert any("the draft's best sentence answers with p 0.10" in w for w in decision.why), decision.why


def test_the_verdict_is_asked_only_where_it_can_change_the_decision():
    near = {"claim_p_max": 0.5, "judge_top_paper": 0.2}  # z = -0.8 + 2 * supported: crosses 0
    far = {"claim_p_max": 0.95, "judge_top_paper": 0.9}  # answered whatever the verdict says
    assert TOY.verdict_matters(near, sg.VERDICT_SIDE)
    assert not TOY.verdict_matters(far, sg.VERDICT_SIDE)
    assert not TOY.verdict_matters({"claim_p_max": 0.0, "judge_top_paper": 0.0}, sg.VERDICT_SIDE)


def _pipeline(indexed, embedder, monkeypatch, draft, selector=TOY, **trust):
    from tests.conftest import make_pipeline

    trust = {"min_coverage": 0.2, "support_threshold": 0.2} | trust
    pipeline, _ = make_pipeline(indexed, embedder, [draft], evidence_judge=True, select={"threshold": None},
                                answer_stages=Settings().answer_stages, **trust)  # fmt: skip
    monkeypatch.setattr(pipeline, "answering", lambda q: lambda texts: np.array(
        [0.9 if ANSWERS.split()[-1] in s and "declines" in s else 0.05 for _, s in texts]))  # fmt: skip
    monkeypatch.setattr("rag.answer.pipeline.shipped_selector", lambda: selector)
    return pipeline


def test_a_draft_that_answers_is_shown_as_checked(indexed, embedder, monkeypatch):
    draft = "Knowledge entropy declines steadily while pretraining advances [1]."
    answer = _pipeline(indexed, embedder, monkeypatch, draft).ask(ENTROPY)
    assert not answer.abstained and "“" not in answer.text and "declines" in answer.text
    (step,) = [t for t in answer.trace if t.stage == "select"]
    assert step.decision == "draft" and "p(the sources answer)" in step.reason
    assert answer.selected["decision"]["outcome"] == "draft"


def test_a_draft_that_declines_is_a_refusal_naming_what_the_sources_do_state(indexed, embedder, monkeypatch):
    # The paper's sentence answers with p 0.9, yet the model said the sources do not state it: the
    # answer is shown as the refusal it is, and the sentence the sources do hold is named.
    answer = _pipeline(indexed, embedder, monkeypatch, "The papers do not state it.").ask(ENTROPY)
    assert answer.abstained and answer.abstain_code == "draft_declined"
    assert ANSWERS in answer.abstain_reason and "Knowledge Entropy Decay" in answer.abstain_reason
    assert answer.selected["decision"]["outcome"] == "refuse"
    assert "the model said the sources do not answer" in answer.selected["decision"]["why"][0]


def test_a_draft_that_answers_then_says_it_is_not_stated_is_a_refusal(indexed, embedder, monkeypatch):
    draft = ("Knowledge entropy declines steadily while pretraining advances [1]. The exact datasets "
             "used are not explicitly stated in the given sources.")  # fmt: skip
    answer = _pipeline(indexed, embedder, monkeypatch, draft).ask(ENTROPY)
    assert answer.abstained and answer.abstain_code == "draft_declined"
    (step,) = [t for t in answer.trace if t.stage == "select"]
    assert step.decision == "refused"


def test_no_answering_sentence_anywhere_is_a_refusal_naming_the_nearest(indexed, embedder, monkeypatch):
    pipeline = _pipeline(indexed, embedder, monkeypatch, "Knowledge entropy is a quantity of models [1].")
    monkeypatch.setattr(pipeline, "answering", lambda q: lambda texts: np.full(len(texts), 0.05))
    answer = pipeline.ask(ENTROPY)
    assert answer.abstained and answer.abstain_code == "selected_refusal"
    assert "The nearest, from “Knowledge Entropy Decay”" in answer.abstain_reason
    assert answer.selected["decision"]["outcome"] == "refuse"


def test_no_rule_refuses_before_the_model_writes_when_the_selector_decides(indexed, embedder, monkeypatch):
    # A question far from every source: the model writes, the selector decides.
    pipeline = _pipeline(indexed, embedder, monkeypatch, "Knowledge entropy declines steadily [1].")
    answer = pipeline.ask("Who won the 1998 football world cup final?")
    assert answer.draft  # the model wrote
    assert not any(t.stage == "screen" and t.decision == "refused" for t in answer.trace)
    assert (
        answer.selected["features"]["relevance"] < 1.0
        and "rule_unstated_focus" in answer.selected["features"]
    )


def test_a_failing_sentence_is_removed_whole_never_cut_into_a_fragment(indexed, embedder, monkeypatch):
    draft = ("Knowledge entropy declines steadily while pretraining advances [1], and the decay was "
             "measured on 4096 GPUs over 37 days [1].")  # fmt: skip
    answer = _pipeline(indexed, embedder, monkeypatch, draft).ask(ENTROPY)
    drafted = {strip_markers(s).strip() for s in tx.sentences(draft)}
    for s in answer.sentences:
        assert strip_markers(s.text).strip() in drafted or s.text.startswith("“"), s.text


def test_the_shipped_selector_reads_its_weights_and_answers_a_clear_case():
    assert WEIGHTS.is_file()
    selector = Selector.load()
    assert 0.0 < selector.threshold < 1.0
    assert set(selector.draft.features) >= set(sg.QUESTION_SIDE)


def test_a_decline_is_read_in_any_sentence_but_only_when_it_speaks_of_the_sources():
    from rag.answer.trust.rules import declines

    assert declines("The papers do not state it.")
    assert declines("It uses four LLMs [1]. Which ones is not explicitly stated in the given sources.")
    assert declines("They train on ImageNet [1]. The abstract does not mention the number of GPUs.")
    assert declines("The models are not named in the provided abstracts [2].")
    # Negations about the method, not about the sources: answers.
    assert not declines("The method does not require labels and does not include a reward model [1].")
    assert not declines("SaRA recycles the parameters with the smallest absolute values [1].")
    assert not declines("The results were not reported to degrade with depth in earlier work [1].")
    assert declines("The exact LLMs are not explicitly stated.")
