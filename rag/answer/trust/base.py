"""The two kinds of trust component, each a small class with one method, registered by name:

- `ClaimCheck.check(claim, source) -> Check`: is one answer sentence backed by one source? (one
  feature of the sentence decision, keep.py)
- `Rule.refuse(answer) -> Refusal | None`: would this rule refuse an answer (or, for a rule read
  before generation, a question and its sources)? (one signal of the answer selector)

A subclass names itself (`class Numbers(ClaimCheck, name="numbers")`) and is then known to
`TrustSettings.checks` / `.rules` by that name: adding a check is one class and one name in the
settings. `Trust` (rag/answer/trust/trust.py) builds the named ones, in the settings' order, and
an unknown name is an `UnknownName` error when it is built (at start-up, `Pipeline.__init__`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rag import text as tx
from rag.question import Intent
from rag.settings import TrustSettings
from rag.types import Check

CHECKS: dict[str, type[ClaimCheck]] = {}
RULES: dict[str, type[Rule]] = {}


class UnknownName(ValueError):
    """A check or rule named in the settings that no class defines."""

    def __init__(self, kind: str, name: str, known: Sequence[str]):
        variable = "RAG_TRUST__CHECKS" if kind == "check" else "RAG_TRUST__RULES"
        super().__init__(
            f"unknown trust {kind} {name!r} in {variable} (the settings' trust.{kind}s); "
            f"known: {', '.join(sorted(known))}"
        )


# "Yes, there is a paper that <the question's words>" says no more than the question: an answer
# particle is no claim of its own.
_PARTICLES = frozenset({"yes", "no"})


@dataclass(frozen=True)
class Claim:
    """An answer sentence as the checks read it: its words, and what it may take from elsewhere."""

    text: str  # without citation markers or the titles it names
    words: frozenset[str]  # its content words (stems)
    given: frozenset[str] = frozenset()  # words that count as covered (the question's, for a named paper)
    asked: frozenset[str] = frozenset()  # the question's content words (the `topic` check)
    subject: tuple[str, ...] = ()  # names a heading above the sentence gives, which the paper must have
    question: str = ""  # a negation the claim repeats from the question is not judged (`polarity`)

    @property
    def users(self) -> str:
        """The question, whose numbers, names and words are the user's, not claims of this
        sentence ("Which two methods ...?" -> "The two methods are X and Y."); empty when the
        sentence says nothing else ("The papers that do X are [1] and [2]."): then that it
        restates is its claim, and its words must stand on the source."""
        own = set(self.words) - tx.content_words(self.question) - tx.meta_stems() - _PARTICLES
        return self.question if self.question and own else ""


@dataclass(frozen=True)
class Source:
    """One source as the checks read it."""

    passage: str  # the title and the sentences it shows
    best: str  # the sentence that matches the claim best
    score: float  # that sentence's support score (`checks.support_score`)
    paper: str  # the title and the whole abstract
    title: str = ""
    sentences: tuple[str, ...] = ()  # every sentence of the abstract (the `judge` check's passage)
    scores: tuple[float, ...] = ()  # each one's support score for the claim


class ClaimCheck:
    """One check of a claim against one source. `by_model` checks are judged by the model on the
    whole sentence (rag/answer/trust/answers.py), not here."""

    name: ClassVar[str]
    by_model: ClassVar[bool] = False

    def __init_subclass__(cls, name: str = "", by_model: bool = False, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if name:
            cls.name, cls.by_model = name, by_model
            CHECKS[name] = cls

    def __init__(self, settings: TrustSettings):
        self.settings = settings  # the thresholds a check reads

    def check(self, claim: Claim, source: Source) -> Check:
        raise NotImplementedError(f"{self.name} is judged by the model on the whole sentence")


@dataclass(frozen=True)
class Screen:
    """What a rule before generation reads: the question, the best dense similarity of the
    retrieved papers, and their titles and abstracts."""

    intent: Intent
    relevance: float
    texts: Sequence[str]
    # The sources' sentence the answer judge finds most likely to answer the question, as
    # (p(answers), sentence, paper title); None when the judge did not read them.
    answering: tuple[float, str, str] | None = None


@dataclass(frozen=True)
class Drafted:
    """What a rule after generation reads: the model's draft, the draft after checking, the question."""

    draft: str
    checked: object  # `checks.Checked` (not imported: checks.py registers its classes from here)
    intent: Intent


@dataclass
class Refusal:
    """Why an answer is not shown: the rule's name and the sentence the user reads."""

    code: str
    detail: str = ""

    @property
    def reason(self) -> str:
        return f"{REASONS[self.code]} {self.detail}".strip()


# Refusals the `select` stage makes (rag/answer/select/stage.py), and each rule's reason.
REASONS: dict[str, str] = {
    "selected_refusal": "no sentence of the sources is likely enough to answer the question.",
    "draft_declined": "the model wrote that the sources do not state what was asked.",
    "draft_unconfirmed": "no sentence of the draft is confirmed by the source it cites.",
    "nothing_kept": "no sentence of the draft is backed by the sources.",
}


class Rule:
    """One rule the answer selector reads as a signal (`rule_<name>`), never a refusal of its own.
    `before` rules read a `Screen` (the question and its sources); the others read a `Drafted`
    answer. `reason` says what it found."""

    name: ClassVar[str]
    reason: ClassVar[str]
    before: ClassVar[bool] = False

    def __init_subclass__(cls, name: str = "", reason: str = "", before: bool = False, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if name:
            cls.name, cls.reason, cls.before = name, reason, before
            RULES[name] = cls
            REASONS[name] = reason

    def __init__(self, settings: TrustSettings):
        self.settings = settings

    def refuse(self, answer) -> Refusal | None:  # a `Screen` for `before` rules, else a `Drafted`
        raise NotImplementedError
