"""Every check, rule and judge of an answer as a number: the selector's features.

Nothing here removes or refuses. Each rule that once vetoed an answer (rag/answer/trust/rules.py)
is read as "would it have fired?" (0 or 1); the answer judge, the claim checks, the model's verdict
and retrieval give their scores. The question-side features alone make the selector's control
(`QUESTION_SIDE`): a selector that did as well from them would be reading the wording.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag import text as tx
from rag.answer.answered import Answering
from rag.answer.citations import strip_markers
from rag.answer.complete import lacks_wanted
from rag.answer.trust import Checked, Drafted, Screen, Trust
from rag.answer.trust.rules import is_refusal
from rag.question import Intent, Kind, Wanted
from rag.search.evidence import Evidence, Sentence

# The question alone: what the control selector may read.
QUESTION_SIDE = (
    "kind_which_paper",
    "kind_comparison",
    "kind_follow_up",
    "kind_parts",
    "wants_number",
    "wants_paper",
    "yes_no",
    "question_words",
)
# The model's verdict on the shown sentences: asked only where it can change the decision.
VERDICT_SIDE = ("verdict_supported", "verdict_unstated", "verdict_contradicted")


@dataclass(frozen=True)
class Best:
    """The answer judge's best sentence of a set of sources: its p, text and paper."""

    p: float
    sentence: Sentence | None = None
    ev: Evidence | None = None


def best_sentence(evidence: Sequence[Evidence]) -> Best:
    """The shown sentence the answer judge finds answers best (p 0 when it scored none)."""
    judged = [(s.answers or 0.0, s, ev) for ev in evidence for s in ev.shown if s.answers is not None]
    if not judged:
        return Best(0.0)
    p, s, ev = max(judged, key=lambda t: t[0])
    return Best(p, s, ev)


def about_paper(intent: Intent, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The source(s) of the paper the question is about: the paper a follow-up points at, else the
    first-ranked source (a quote is only ever taken from these)."""
    if intent.about is not None:
        pinned = [ev for ev in evidence if ev.paper.id == intent.about.id]
        if pinned:
            return pinned
    return list(evidence[:1])


def question_features(intent: Intent) -> dict[str, float]:
    return {
        "kind_which_paper": float(intent.kind is Kind.WHICH_PAPER),
        "kind_comparison": float(intent.kind is Kind.COMPARISON or bool(intent.subjects)),
        "kind_follow_up": float(intent.kind is Kind.FOLLOW_UP or intent.refers_back),
        "kind_parts": float(len(intent.parts) > 1),
        "wants_number": float(intent.wants is Wanted.NUMBER),
        "wants_paper": float(intent.wants is Wanted.PAPER),
        "yes_no": float(intent.yes_no),
        "question_words": math.log1p(len(intent.words)),
    }


def screen_features(trust: Trust, screen: Screen) -> dict[str, float]:
    """The rules once applied before generation, each as whether it would have refused."""
    out = {"relevance": float(screen.relevance)}
    for rule in trust.refusal_rules:
        if rule.before:
            out[f"rule_{rule.name}"] = float(rule.refuse(screen) is not None)
    return out


@dataclass
class DraftSignals:
    """What the checks and judges found of one checked draft."""

    features: dict[str, float] = field(default_factory=dict)
    claim_p: list[float] = field(default_factory=list)  # the answer judge's p of each shown claim


def draft_features(
    trust: Trust,
    intent: Intent,
    draft: str,
    checked: Checked,
    evidence: Sequence[Evidence],
    answering: Answering | None,
) -> DraftSignals:
    """The checked draft as numbers: how much of it survived its checks, whether the judge finds
    that what is left answers, and which after-generation rules would have refused it."""
    shown = [s for s in checked.sentences if s.claim]
    removed = checked.removed
    drafted = len(shown) + len(removed)
    titles = {c.number: c.title for c in checked.citations}
    claims = [(titles.get(s.citations[0], "") if s.citations else "", strip_markers(s.text)) for s in shown]
    lost = [("", strip_markers(s.text)) for s in removed]
    scored = [float(p) for p in answering(claims + lost)] if answering and (claims or lost) else []
    claim_p, lost_p = scored[: len(claims)], scored[len(claims) :]
    asked = intent.words - tx.meta_stems()
    overlap = max((len(asked & tx.content_words(c)) for _, c in claims), default=0)
    top = about_paper(intent, evidence)
    cited = {c.paper_id for c in checked.citations}
    f = {
        "declined": float(not draft.strip() or is_refusal(draft)),
        "claims_shown": math.log1p(len(shown)),
        "shown_share": len(shown) / drafted if drafted else 0.0,
        "removed": math.log1p(len(removed)),
        "claim_p_max": max(claim_p, default=0.0),
        "claim_p_mean": sum(claim_p) / len(claim_p) if claim_p else 0.0,
        "removed_p_max": max(lost_p, default=0.0),
        "support_min": min((s.score for s in shown), default=0.0),
        "overlap": overlap / len(asked) if asked else 0.0,
        "cites_top": float(any(ev.paper.id in cited for ev in top)),
        "invented": float(checked.invented > 0),
    }
    f["rule_lacks_wanted"] = float(lacks_wanted(intent, " ".join(c for _, c in claims)))
    drafted_view = Drafted(draft, checked, intent)
    for rule in trust.refusal_rules:
        if not rule.before:
            f[f"rule_{rule.name}"] = float(rule.refuse(drafted_view) is not None)
    return DraftSignals(f, claim_p)


def verdict_features(stances: Sequence[str]) -> dict[str, float]:
    """The model's verdicts on the shown sentences, as shares ("supported", "unstated", ...)."""
    n = len(stances)
    if not n:
        return dict.fromkeys(VERDICT_SIDE, 0.0)
    return {
        f"verdict_{k}": sum(1 for s in stances if s == k) / n
        for k in ("supported", "unstated", "contradicted")
    }


def evidence_features(intent: Intent, evidence: Sequence[Evidence]) -> dict[str, float]:
    """How well the offered sentences answer, by the answer judge: best of all, best of the paper
    the question is about, and the runner-up (a clear best says more than two close ones)."""
    every = sorted((s.answers for ev in evidence for s in ev.shown if s.answers is not None), reverse=True)
    top = best_sentence(about_paper(intent, evidence))
    said = top.sentence.text if top.sentence else ""
    return {
        "judge_best": every[0] if every else 0.0,
        "judge_second": every[1] if len(every) > 1 else 0.0,
        "judge_top_paper": top.p,
        # Asked for an amount, does the sentence a quote would show state one the question does not?
        "quote_gives_amount": float(bool(tx.amounts(said) - tx.amounts(intent.question))),
        "sources": math.log1p(len(evidence)),
    }
