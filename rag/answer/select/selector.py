"""One decision per answer: show the draft, quote the sentence that answers, or refuse.

Two logistic regressions over the answer's signals (signals.py), trained on outcomes
(eval/selector/): p(the checked draft holds the answer) and p(the best sentence of the paper the
question is about, quoted, holds it). One threshold sets the trade-off between refusing and
answering: the draft when its p reaches it, else the quote when its p does, else a refusal that
names the nearest sentence. A logistic regression explains itself: each feature's push on the
decision is its weight times its standardized value, and the largest pushes are said in words.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path

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
    "cites_top": "the draft cites the paper the question is about",
    "verdict_supported": "the model confirmed {v:.0%} of the shown sentences",
    "verdict_unstated": "the model found {v:.0%} of the shown sentences unstated",
    "verdict_contradicted": "the model found {v:.0%} of the shown sentences contradicted",
}


class Outcome(StrEnum):
    DRAFT = "draft"
    QUOTE = "quote"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Logistic:
    """p = sigmoid(b + sum w_i (x_i - mean_i) / scale_i) over named features (a missing one: its mean)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weight: tuple[float, ...]
    bias: float

    @classmethod
    def from_json(cls, d: dict) -> Logistic:
        return cls(tuple(d["features"]), tuple(d["mean"]), tuple(d["scale"]), tuple(d["weight"]), d["bias"])

    def to_json(self) -> dict:
        return dict(features=list(self.features), mean=list(self.mean), scale=list(self.scale),
                    weight=list(self.weight), bias=self.bias)  # fmt: skip

    def pushes(self, x: dict[str, float]) -> dict[str, float]:
        """Each feature's term of the log-odds."""
        return {
            f: w * (x.get(f, m) - m) / (s or 1.0)
            for f, m, s, w in zip(self.features, self.mean, self.scale, self.weight)
        }

    def p(self, x: dict[str, float]) -> float:
        z = self.bias + sum(self.pushes(x).values())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass
class Decision:
    outcome: Outcome
    p_draft: float
    p_quote: float
    threshold: float
    why: list[str] = field(default_factory=list)  # the features that moved the decision, in words

    def to_json(self) -> dict:
        return dict(outcome=self.outcome.value, p_draft=round(self.p_draft, 4), p_quote=round(self.p_quote, 4),
                    threshold=self.threshold, why=self.why)  # fmt: skip


@dataclass(frozen=True)
class Selector:
    draft: Logistic
    quote: Logistic
    threshold: float
    trained_on: str = ""

    @classmethod
    def load(cls, path: Path = WEIGHTS, threshold: float | None = None) -> Selector:
        d = json.loads(path.read_text())
        t = d["threshold"] if threshold is None else threshold
        return cls(Logistic.from_json(d["draft"]), Logistic.from_json(d["quote"]), t, d.get("trained_on", ""))

    def decide(self, x: dict[str, float], can_quote: bool = True) -> Decision:
        p_draft, p_quote = self.draft.p(x), self.quote.p(x) if can_quote else 0.0
        if p_draft >= self.threshold:
            outcome, model = Outcome.DRAFT, self.draft
        elif p_quote >= self.threshold:
            outcome, model = Outcome.QUOTE, self.quote
        else:
            outcome, model = Outcome.REFUSE, self.draft
        return Decision(outcome, p_draft, p_quote, self.threshold, explain(model, x))

    def verdict_matters(self, x: dict[str, float], verdict: tuple[str, ...]) -> bool:
        """Whether the model's verdict can change the decision: the draft's p with every shown
        sentence confirmed against every one found unstated or contradicted, on either side of
        the threshold (the model is asked only then)."""
        best = x | dict.fromkeys(verdict, 0.0) | {"verdict_supported": 1.0}
        worst = [x | dict.fromkeys(verdict, 0.0) | {v: 1.0} for v in verdict if v != "verdict_supported"]
        ps = [self.draft.p(best), *(self.draft.p(w) for w in worst)]
        return min(ps) < self.threshold <= max(ps)


def explain(model: Logistic, x: dict[str, float], top: int = 3) -> list[str]:
    """The features that pushed the decision most, either way, in words with their push."""
    pushes = sorted(model.pushes(x).items(), key=lambda t: -abs(t[1]))
    out = []
    for name, push in pushes[:top]:
        v = x.get(name, 0.0)
        said = SAID.get(name)
        text = (
            said.format(v=v)
            if said
            else (f"{_rule(name)} would have refused" if v else f"{_rule(name)} did not fire")
            if name.startswith("rule_")
            else f"{name.replace('_', ' ')} = {v:.2f}"
        )  # noqa: E501
        out.append(f"{text} ({'+' if push >= 0 else '−'}{abs(push):.2f})")
    return out


def _rule(name: str) -> str:
    return f"the rule {name.removeprefix('rule_')}"


@cache
def shipped_selector() -> Selector | None:
    """The shipped selector, or None when it has not been trained yet."""
    return Selector.load() if WEIGHTS.is_file() else None
