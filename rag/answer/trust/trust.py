"""`Trust`: the checks and rules the settings name, built once, in their order, and the sentence
decision that reads the checks (keep.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rag import text as tx
from rag.answer.trust import checks as ck
from rag.answer.trust import keep
from rag.answer.trust import rules as _rules  # noqa: F401  (registers the rules by name)
from rag.answer.trust.base import (
    CHECKS,
    RULES,
    Claim,
    ClaimCheck,
    Rule,
    Screen,
    Source,
    UnknownName,
)
from rag.question import Intent
from rag.search.evidence import Evidence
from rag.settings import TrustSettings
from rag.types import SearchResult

# The rules read before generating (the others read a draft).
PRE_GENERATION_RULES = tuple(name for name, rule in RULES.items() if rule.before)
# Sentences of the source the `entailment` verdict reads (`Verdict.passage`).
PASSAGE_SENTENCES = 2


def _built(names: Sequence[str], known: dict, kind: str, settings: TrustSettings) -> tuple:
    for name in names:
        if name not in known:
            raise UnknownName(kind, name, list(known))
    return tuple(known[name](settings) for name in dict.fromkeys(names))


@dataclass(frozen=True)
class Trust:
    """The settings' checks and rules, each an object of its named class, in the settings' order.
    An unknown name raises `UnknownName` here: `Pipeline.__init__` builds one, so a typo in the
    settings stops the program at start-up."""

    settings: TrustSettings = field(default_factory=TrustSettings)
    claim_checks: tuple[ClaimCheck, ...] = field(init=False, repr=False)
    refusal_rules: tuple[Rule, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "claim_checks", _built(self.settings.checks, CHECKS, "check", self.settings))
        object.__setattr__(self, "refusal_rules", _built(self.settings.rules, RULES, "rule", self.settings))

    @classmethod
    def of(cls, **fields) -> Trust:
        """Trust with these trust settings (the rest default): `Trust.of(support_threshold=0.3)`."""
        return cls(TrustSettings(**fields))

    def with_(self, **fields) -> Trust:
        """The same trust with some settings changed."""
        return Trust(self.settings.model_copy(update=fields))

    @property
    def checks(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.claim_checks)

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.refusal_rules)

    def without(self, name: str) -> Trust:
        """The same trust with one check or rule switched off (for ablations)."""
        return self.with_(
            checks=[c for c in self.checks if c != name], rules=[r for r in self.rules if r != name]
        )

    def verify(
        self,
        claim: str,
        vector: np.ndarray,
        source: Evidence,
        *,
        whole: bool = False,
        given: frozenset[str] = frozenset(),
        asked: frozenset[str] = frozenset(),
        subject: Sequence[str] = (),
        question: str = "",
        decide: bool = True,
    ) -> ck.Verdict:
        """Run the enabled checks of `claim` against one source (its shown sentences, or all of
        them when `whole`); the title counts as part of the source, and the content words in
        `given` count as covered. `asked`: the question's content words (the topic check);
        `subject`: names a heading above the claim gives, which the source's paper must contain;
        `question`: a negation the claim repeats from it is not judged (`check_polarity`). The
        checks are the sentence decision's features; it decides (`decide` False: features only)."""
        shown = source.sentences if whole else source.shown
        words = tx.content_words(claim)
        scored = [(ck.support_score(vector, words, s), s) for s in shown]
        score, best = max(scored, key=lambda t: t[0]) if scored else (0.0, None)
        ranked = sorted(scored, key=lambda t: -t[0])[:PASSAGE_SENTENCES]
        close = tuple(sorted((s for _, s in ranked), key=lambda s: s.start))
        told = Claim(claim, frozenset(words), given, asked, tuple(subject), question)
        passage = source.paper.title + ". " + " ".join(s.text for s in shown)
        # The judge reads the best sentences of the whole abstract, not only those the prompt showed.
        every = source.sentences if "judge" in self.checks else []
        # Asked about the whole abstract, `scored` already holds every sentence's score.
        scores = (
            [sc for sc, _ in scored]
            if whole and every
            else [ck.support_score(vector, words, s) for s in every]
        )
        against = Source(passage, best.text if best else "", score, source.paper.text, source.paper.title,
                         tuple(s.text for s in every), tuple(scores))  # fmt: skip
        # With the model's verdict on, it judges negation: the word-level polarity check also flags
        # true sentences that use a negative word truthfully ("needs no training" for "training-free").
        skip = {"polarity"} if "entailment" in self.checks else set()
        checks = [c.check(told, against) for c in self.claim_checks if not c.by_model and c.name not in skip]
        cosine = float(vector @ best.vector) if best is not None else 0.0
        x = keep.features(told, against, checks, cosine)
        decision = self.decision.decide(x) if decide else None
        return ck.Verdict(source.number, checks, best, round(score, 4), close, x, decision)

    @property
    def decision(self) -> keep.SentenceDecision:
        """The sentence decision (rag/answer/trust/keep.py) at the settings' threshold."""
        return keep.shipped(self.settings.keep_threshold)

    # ---- rules

    def screen_view(
        self, intent: Intent, results: Sequence[SearchResult], evidence: Sequence[Evidence] = ()
    ) -> Screen:
        """What the rules before generation read (the selector reads each rule's result as a signal):
        the best dense similarity of the retrieved papers, their titles and abstracts, and the
        evidence's best-answering sentence when the answer judge scored it."""
        relevance = max((r.relevance for r in results), default=0.0)
        judged = [(s.answers, s.text, ev.paper.display_title) for ev in evidence for s in ev.sentences
                  if s.answers is not None]  # fmt: skip
        best = max(judged, default=None, key=lambda t: t[0])
        return Screen(intent, relevance, [r.paper.text for r in results], best)


def trust_from_settings(settings) -> Trust:
    """The trust of a whole `Settings`."""
    return Trust(settings.trust)
