"""One decision per answer: show the draft, quote the sentence that answers, or refuse.

Three logistic regressions over the answer's signals (signals.py), trained on outcomes
(eval/selector/): p(the sources answer the question at all), p(the checked draft holds the answer)
and p(the best sentence of the paper the question is about, quoted, holds it). One threshold on the
first sets the trade-off between refusing and answering (a refusal names the nearest sentence);
an answer shows the draft when it more likely answers than not, else the likelier of the two. A logistic
regression explains itself: each feature's push on the decision is its weight times its
standardized value, and the largest pushes are said in words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path

from rag.logistic import Logistic

WEIGHTS = Path(__file__).resolve().parents[2] / "judge" / "weights" / "selector" / "selector.json"

# How each feature reads in a reason (value formatted with :.2f where a share or a p).
SAID = {
    "judge_best": "the best offered sentence answers with p {v:.2f}",
    "judge_second": "the second-best offered sentence answers with p {v:.2f}",
    "judge_top_paper": "the question's paper's best sentence answers with p {v:.2f}",
    "claim_p_max": "the draft's best sentence answers with p {v:.2f}",
    "claim_p_mean": "the draft's sentences answer with mean p {v:.2f}",
    "removed_p_max": "a sentence the checks removed answered with p {v:.2f}",
    "shown_share": "{v:.0%} of the draft's sentences passed their checks",
    "support_min": "the weakest shown sentence's support is {v:.2f}",
    "overlap": "the shown sentences hold {v:.0%} of the question's words",
    "relevance": "the closest passage's similarity is {v:.2f}",
    "declined": "the model said the sources do not answer",
    "unconfirmed": "the model's verdict confirmed none of the shown sentences",
    "cites_top": "the draft cites the paper the question is about",
    "verdict_supported": "the model confirmed {v:.0%} of the shown sentences",
    "verdict_unstated": "the model found {v:.0%} of the shown sentences unstated",
    "verdict_contradicted": "the model found {v:.0%} of the shown sentences contradicted",
}


class Outcome(StrEnum):
    DRAFT = "draft"
    QUOTE = "quote"
    REFUSE = "refuse"


@dataclass
class Decision:
    outcome: Outcome
    p_answers: float  # the sources answer the question: refused below the threshold
    p_draft: float
    p_quote: float
    threshold: float
    why: list[str] = field(default_factory=list)  # the features that moved the decision, in words

    def to_json(self) -> dict:
        return dict(outcome=self.outcome.value, p_answers=round(self.p_answers, 4), p_draft=round(self.p_draft, 4),
                    p_quote=round(self.p_quote, 4), threshold=self.threshold, why=self.why)  # fmt: skip


@dataclass(frozen=True)
class Selector:
    answers: Logistic
    draft: Logistic
    quote: Logistic
    threshold: float
    trained_on: str = ""

    @classmethod
    def load(cls, path: Path = WEIGHTS, threshold: float | None = None) -> Selector:
        d = json.loads(path.read_text())
        t = d["threshold"] if threshold is None else threshold
        models = (Logistic.from_json(d[k]) for k in ("answers", "draft", "quote"))
        return cls(*models, threshold=t, trained_on=d.get("trained_on", ""))

    def choose(self, x: dict[str, float], can_quote: bool = True) -> tuple[Outcome, float, float, float]:
        p_answers, p_draft = self.answers.p(x), self.draft.p(x)
        p_quote = self.quote.p(x) if can_quote else 0.0
        if p_answers < self.threshold:
            outcome = Outcome.REFUSE
        else:
            outcome = Outcome.QUOTE if quote_wins(p_draft, p_quote) else Outcome.DRAFT
        return outcome, p_answers, p_draft, p_quote

    def decide(self, x: dict[str, float], can_quote: bool = True) -> Decision:
        outcome, p_answers, p_draft, p_quote = self.choose(x, can_quote)
        model = {Outcome.REFUSE: self.answers, Outcome.DRAFT: self.draft, Outcome.QUOTE: self.quote}[outcome]
        return Decision(outcome, p_answers, p_draft, p_quote, self.threshold, explain(model, x))

    def verdict_matters(self, x: dict[str, float], verdict: tuple[str, ...]) -> bool:
        """Whether the model's verdict can change the decision: the outcome with every shown
        sentence confirmed, against every one found unstated or contradicted (the log-odds are
        linear in the verdict's shares, so any mixture falls between these). Asked only then."""
        corners = [x | dict.fromkeys(verdict, 0.0) | {v: 1.0} for v in verdict]
        return len({self.choose(c)[0] for c in corners}) > 1


def quote_wins(p_draft: float, p_quote: float) -> bool:
    """The draft, in the model's own words, when it more likely answers than not; else whichever
    is likelier (out of fold on dev: 0.814 facts cited with 12 quotes, against 0.808 with 50 for
    the likelier of the two every time, eval/selector/train.py)."""
    return p_draft < 0.5 and p_quote > p_draft


def explain(model: Logistic, x: dict[str, float], top: int = 3) -> list[str]:
    """The features that pushed the decision most, either way, in words with their push."""
    pushes = sorted(model.pushes(x).items(), key=lambda t: -abs(t[1]))
    return [
        f"{said(name, x.get(name, 0.0))} ({'+' if push >= 0 else '-'}{abs(push):.2f})"
        for name, push in pushes[:top]
    ]


def said(name: str, v: float) -> str:
    """One feature and its value, in words."""
    if name in SAID:
        return SAID[name].format(v=v)
    if name.startswith("rule_"):
        return f"{_rule(name)} would have refused" if v else f"{_rule(name)} did not fire"
    return f"{name.replace('_', ' ')} = {v:.2f}"


def _rule(name: str) -> str:
    return f"the rule {name.removeprefix('rule_')}"


@cache
def shipped_selector() -> Selector | None:
    """The shipped selector, or None when it has not been trained yet."""
    return Selector.load() if WEIGHTS.is_file() else None
