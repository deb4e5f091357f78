"""Claim checks: each a small function returning a `Check` (name, passed, why not), and the named
class the settings choose it by (at the end). A claim is checked against one source; `Verdict`
collects the checks with the best-matching sentence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from rag import text as tx
from rag.answer.trust.base import Claim, ClaimCheck, Source
from rag.answer.trust.keep import Decision
from rag.answer.trust.polarity import DOWN, UP, check_direction, check_polarity, polarity_terms
from rag.search.evidence import Sentence
from rag.types import AnswerSentence, Check, Citation


class Stance(StrEnum):
    """What an abstract says of a claim (the model's verdict, `rag.answer.verdicts.stance`)."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNSTATED = "unstated"


__all__ = ["DOWN", "UP", "check_direction", "check_polarity", "polarity_terms"]  # re-exported


def _listed(noun: str, items: Sequence[str]) -> str:
    return f"the {noun} {items[0]} is" if len(items) == 1 else f"the {noun}s {', '.join(items)} are"


def _derived(number: str, stated: set[str]) -> bool:
    """A difference or ratio of two numbers at the claim's precision ("by 3.54 points, from 80.61%
    to 84.15%"): arithmetic the claim shows on numbers the source states, not an invention."""
    decimals = len(number.split(".")[1]) if "." in number else 0
    target = float(number)
    values = [float(v) for v in stated]
    for a in values:
        for b in values:
            if a == b:
                continue
            if round(abs(a - b), decimals) == target or (b and round(a / b, max(decimals, 1)) == target):
                return True
    return False


def said_numbers(text: str) -> set[str]:
    """Every number a text says, in digits or in words ("which two methods" says 2)."""
    return tx.numbers(text) | {n for n, _, _ in tx.quantities(text)}


def check_numbers(claim: str, passage: str, question: str = "") -> Check:
    """The claim's numbers are in the passage; a number the question itself says ("the two
    methods") is the user's, not the answer's claim, and is never held against the source."""
    stated = tx.numbers(passage)
    # Counted things in words ("five enhancements") are claims too; "one", "half" are not.
    claimed = tx.numbers(claim, words=False) | {n for n, _, _ in tx.quantities(claim)}
    claimed -= said_numbers(question)
    operands = claimed & stated  # only numbers the claim itself states may be combined
    written_out = tx.scaled(claim)  # "349K" is stated as "349,000" too
    missing = sorted(
        n for n in claimed - stated if not _derived(n, operands) and written_out.get(n) not in stated
    )
    if missing:
        return Check("numbers", False, f"{_listed('number', missing)} not in the source")
    return Check("numbers", True)


def check_quantities(claim: str, passage: str) -> Check:
    """Each number measures what the passage says it measures: a number whose words in the claim
    ("3.0% gain on Commonsense") follow another number of the passage, and never this one
    ("1.1% gain on Commonsense, 3.0% on MMLU"), was moved from one quantity to another."""
    stated = tx.quantities(passage)
    for number, what, words in tx.quantities(claim):
        own = [w for n, w, _ in stated if n == number]
        if not what or not own or any(not w or w & what for w in own):
            continue
        other = next((n for n, w, _ in stated if n != number and w & what), None)
        if other is not None:
            return Check("quantities", False, f"the source gives {other}, not {number}, for “{words}”")
    return Check("quantities", True)


def check_names(
    claim: str, passage: str, subject: Sequence[str] = (), paper: str = "", question: str = ""
) -> Check:
    """The claim's names are in the passage (or in the question: the user's words are no claim);
    the `subject` names a heading above the claim gives ("The two steps of LoLCATs are:") are in
    the `paper` (title and abstract)."""
    # "RRM-aligned", "MoE-based": the name is what comes before a lower-case suffix.
    wanted = {re.sub(r"(?<=[A-Za-z0-9])-[a-z]+$", "", n) if tx.is_name(re.sub(r"-[a-z]+$", "", n)) else n
              for n in tx.names(claim)}  # fmt: skip
    missing = sorted(n for n in wanted if not tx.name_in(n, passage) and not tx.name_in(n, question))
    if missing:
        return Check("names", False, f"{_listed('name', missing)} not in the source")
    lacking = [n for n in subject if not tx.name_in(n, paper)]
    if lacking:
        return Check("names", False, f"the name {lacking[0]} of the heading above it is not in the source")
    return Check("names", True)


def check_coverage(
    claim_words: set[str], passage: str, minimum: float, given: frozenset[str] | set[str] = frozenset()
) -> Check:
    """Share of the claim's own content words (words about the sources themselves, and `given`
    words it may take from elsewhere, aside) that occur in the passage, which must be more than
    `minimum`: true paraphrases keep most of their words, another paper's sentences few. Exactly
    half is not most: stems meet by chance ("multiple" and "multiplications")."""
    words = claim_words - tx.meta_stems() - set(given)
    share = len(words & tx.content_words(passage)) / len(words) if words else 1.0
    if share <= minimum:
        return Check("coverage", False, f"most of its words are not in the source ({share:.0%} are)")
    return Check("coverage", True)


def support_score(claim_vector: np.ndarray, claim_words: set[str], sentence: Sentence) -> float:
    """How well one source sentence covers a claim: cosine blended with shared content words."""
    cos = float(claim_vector @ sentence.vector)
    lexical = len(claim_words & tx.content_words(sentence.text)) / len(claim_words) if claim_words else 0.0
    return 0.6 * cos + 0.4 * lexical


@dataclass
class Verdict:
    """A claim against one source: the checks, the best-matching sentence and its support, and
    the sentences the model's verdict reads (`passage`)."""

    number: int
    checks: list[Check]
    best: Sentence | None
    score: float
    close: tuple[Sentence, ...] = ()  # the best-matching sentences, in the abstract's order
    features: dict[str, float] = field(default_factory=dict)  # the sentence decision's input (keep.py)
    decision: Decision | None = None  # the sentence decision (None: not decided, every check must pass)

    @property
    def passage(self) -> str:
        """What the `entailment` verdict is asked about: a claim often joins two sentences."""
        return " ".join(s.text for s in self.close)

    @property
    def passed(self) -> bool:
        """Kept by the sentence decision: no single check removes a sentence on its own."""
        if self.decision is not None:
            return self.decision.keep
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        """Why the sentence is not kept: the decision's reason in words, then the checks it failed."""
        failed = [c for c in self.checks if not c.passed]
        if self.decision is not None and not self.decision.keep:
            return [Check("decision", False, self.decision.why), *failed]
        return failed


def has_claim(claim: str) -> bool:
    """Whether a sentence asserts anything checkable ("Yes." and "See [1]." do not)."""
    return bool(tx.numbers(claim) or tx.names(claim) or len(tx.content_words(claim) - tx.meta_stems()) >= 2)


@dataclass
class Checked:
    """A draft after checking: the sentences shown (backed, or without a claim), the ones removed,
    the citations of the shown ones, and how many markers pointed at sources never offered."""

    text: str
    sentences: list[AnswerSentence]
    removed: list[AnswerSentence]
    citations: list[Citation]
    invented: int
    supported: list[str]  # what the backed sentences claim, paper titles left out


# ---- the checks by name (`TrustSettings.checks`), in the order the defaults run them


class Numbers(ClaimCheck, name="numbers"):
    def check(self, claim: Claim, source: Source) -> Check:
        return check_numbers(claim.text, source.passage, claim.users)


class Quantities(ClaimCheck, name="quantities"):
    def check(self, claim: Claim, source: Source) -> Check:
        return check_quantities(claim.text, source.passage)


class Names(ClaimCheck, name="names"):
    def check(self, claim: Claim, source: Source) -> Check:
        return check_names(claim.text, source.passage, claim.subject, source.paper, claim.users)


class Polarity(ClaimCheck, name="polarity"):
    """Judged against the best-matching sentence: negation is a property of one statement."""

    def check(self, claim: Claim, source: Source) -> Check:
        return check_polarity(claim.text, source.best, claim.question)


class Direction(ClaimCheck, name="direction"):
    def check(self, claim: Claim, source: Source) -> Check:
        return check_direction(claim.text, source.best)


class Coverage(ClaimCheck, name="coverage"):
    def check(self, claim: Claim, source: Source) -> Check:
        given = claim.given | tx.content_words(claim.users)  # the question's words: the user's
        return check_coverage(set(claim.words), source.passage, self.settings.min_coverage, given)


class Similarity(ClaimCheck, name="similarity"):
    """The claim is about what the source says: its best sentence's support score."""

    def check(self, claim: Claim, source: Source) -> Check:
        if source.score >= self.settings.support_threshold:
            return Check(self.name, True)
        return Check(self.name, False, f"the source is about something else ({source.score:.2f})")


class PaperFit(ClaimCheck, name="paper_fit", by_model=True):
    """Asked which paper, the model confirms the named paper (`model_checks.paper_answer`)."""


class Entailment(ClaimCheck, name="entailment", by_model=True):
    """The model's verdict on the whole sentence against its cited paper (answers.py); with it
    on, the word-level `polarity` check is left to the model."""


class Judged(ClaimCheck, name="judge"):
    """The support judge citewise trained (rag/judge/): the claim against the best sentences of the
    cited abstract. Confident either way, it decides; in between it passes the claim unsure, and
    the `verdict` stage asks the model about it (the cascade)."""

    def check(self, claim: Claim, source: Source) -> Check:
        from rag.judge.support import passage, support_judge

        judge = support_judge()
        text = passage(source.title, source.sentences, source.scores, judge.sentences)
        said = judge.judge([(claim.text, text)])[0]
        if said.supported >= self.settings.judge_keep:
            return Check(self.name, True, f"supported ({said.supported:.2f})")
        if said.supported > self.settings.judge_remove:
            return Check(self.name, True, f"unsure ({said.supported:.2f} supported)", sure=False)
        where = f": “{source.best.rstrip('.')}”" if source.best else ""
        if said.contradicted >= said.unstated:
            return Check(
                self.name, False, f"the cited abstract says otherwise ({said.contradicted:.2f}){where}"
            )
        return Check(self.name, False, f"the cited abstract does not state it ({said.unstated:.2f})")
