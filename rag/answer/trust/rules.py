"""Trust: the thresholds, the enabled checks and the abstention rules, each rule named so an
ablation can switch it off; and how a model's refusal is recognized."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from rag import text as tx
from rag.answer.citations import strip_markers
from rag.answer.trust import checks as ck
from rag.answer.trust.checks import Checked
from rag.questions import Intent, Wanted
from rag.search.evidence import Evidence
from rag.settings import Settings
from rag.types import Check, SearchResult

# Every check and rule, in the order they run; the settings' defaults switch all of them on, and are
# the thresholds' only source.
_DEFAULTS = Settings.model_fields
CLAIM_CHECKS = tuple(_DEFAULTS["claim_checks"].default)
RULES = tuple(_DEFAULTS["abstention_rules"].default)
PRE_GENERATION_RULES = ("low_relevance", "unstated_focus")
# Checks of a sentence as a whole, not run against one passage by `Trust.verify` (rag/answer/trust/answers.py).
SENTENCE_CHECKS = ("paper_fit", "entailment")  # judged by the model in answers.py, not in `verify`
# Sentences of the source the `entailment` verdict reads (`Verdict.passage`).
PASSAGE_SENTENCES = 2

REASONS = {
    "low_relevance": "no indexed passage is close enough to the question",
    "unstated_focus": "the sources never mention what the question counts",
    "model_declined": "the model found no answer in the sources",
    "no_supported_sentence": "no sentence of the draft is backed by the sources",
    "restates_question": "the answer only repeats the question",
    "answer_removed": "the sentence that answered the question is not backed by the sources",
    "off_question": "no sentence backed by the sources is about what the question asks",
    "judged_unanswered": "the checked answer does not give what the question asks for",
    "lacks_wanted": "neither the answer nor its sources give the kind of thing asked for",
}

# ---- refusal detection

# Phrases by which a model declines, at the start of an answer.
_REFUSAL_START = re.compile(
    r"^\W*(the indexed papers do not answer|(the )?(provided )?(papers|abstracts) do not "
    r"(state|say|mention|specify|provide|answer)|(the )?(provided |given )?sources? (do|does) not "
    r"(contain|answer|mention|provide|say|specify|state)|(i )?(cannot|can't|can not) (answer|determine|find)|"
    r"there is no (information|mention)|(this|that) (information )?is not (mentioned|stated|provided|specified)|"
    r"not (mentioned|stated|specified|provided) in the (provided )?sources)",
    re.I,
)
# Phrases that decline anywhere in the first sentence ("The license is not explicitly stated.").
_DECLINE = re.compile(
    r"\bnot (explicitly |directly |specifically )?(stated|mentioned|specified|provided|given|reported|"
    r"described|discussed)\b|\b(do|does|did) not (explicitly )?(provide|mention|state|specify|contain|report|"
    r"include|say|give)\b|\bno (information|details?|mention|data) (about|on|regarding|is|are)\b|"
    r"\b(unable|not possible) to (answer|determine|find|tell)\b",
    re.I,
)


def is_refusal(text: str) -> bool:
    """The model declined: a refusal opening, or a "not stated" phrase in its first sentence."""
    text = text.strip()
    if _REFUSAL_START.search(text):
        return True
    first = tx.sentences(text)[:1]
    return bool(_DECLINE.search(first[0] if first else text))


@dataclass
class Trust:
    """The thresholds and the enabled checks and rules: one object, built from settings."""

    support_threshold: float = _DEFAULTS["support_threshold"].default
    min_relevance: float = _DEFAULTS["min_relevance"].default
    min_coverage: float = _DEFAULTS["min_coverage"].default
    min_paper_fit: float = _DEFAULTS["min_paper_fit"].default
    trim_spans: bool = _DEFAULTS["trim_spans"].default
    checks: tuple[str, ...] = CLAIM_CHECKS
    rules: tuple[str, ...] = RULES

    def without(self, name: str) -> Trust:
        """The same trust with one check or rule switched off (for ablations)."""
        return replace(
            self,
            checks=tuple(c for c in self.checks if c != name),
            rules=tuple(r for r in self.rules if r != name),
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
    ) -> ck.Verdict:
        """Run the enabled checks of `claim` against one source (its shown sentences, or all of
        them when `whole`); the title counts as part of the source, and the content words in
        `given` count as covered. `asked`: the question's content words (the topic check);
        `subject`: names a heading above the claim gives, which the source's paper must contain;
        `question`: a negation the claim repeats from it is not judged (`check_polarity`)."""
        shown = (
            source.sentences if whole or not source.chosen else [source.sentences[i] for i in source.chosen]
        )
        passage = source.paper.title + ". " + " ".join(s.text for s in shown)
        words = tx.content_words(claim)
        scored = [(ck.support_score(vector, words, s), s) for s in shown]
        score, best = max(scored, key=lambda t: t[0]) if scored else (0.0, None)
        ranked = sorted(scored, key=lambda t: -t[0])[:PASSAGE_SENTENCES]
        close = tuple(sorted((s for _, s in ranked), key=lambda s: s.start))
        best_text = best.text if best else ""
        run = {
            "numbers": lambda: ck.check_numbers(claim, passage),
            "quantities": lambda: ck.check_quantities(claim, passage),
            "names": lambda: ck.check_names(claim, passage, subject, source.paper.text),
            "polarity": lambda: ck.check_polarity(claim, best_text, question),
            "direction": lambda: ck.check_direction(claim, best_text),
            "coverage": lambda: ck.check_coverage(words, passage, self.min_coverage, given),
            "topic": lambda: ck.check_topic(words - given, asked, source.paper.text),
            "similarity": lambda: Check(
                "similarity",
                score >= self.support_threshold,
                ""
                if score >= self.support_threshold
                else f"the source is about something else ({score:.2f})",
            ),
        }
        # With the model's verdict on, it judges negation: the word-level polarity check also flags
        # true sentences that use a negative word truthfully ("needs no training" for "training-free").
        judged = SENTENCE_CHECKS + (("polarity",) if "entailment" in self.checks else ())
        checks = [run[name]() for name in self.checks if name not in judged]
        return ck.Verdict(source.number, checks, best, round(score, 4), close)

    # ---- rules

    def on(self, rule: str) -> bool:
        return rule in self.rules

    def screen(self, intent: Intent, results: Sequence[SearchResult]) -> Refusal | None:
        """`before_generation` on retrieved papers: their best dense similarity, titles and abstracts."""
        relevance = max((r.relevance for r in results), default=0.0)
        return self.before_generation(intent, relevance, [r.paper.text for r in results])

    def before_generation(self, intent: Intent, relevance: float, texts: Sequence[str]) -> Refusal | None:
        """The refusal before generating, if a rule makes one; `texts` are the retrieved papers'
        titles and abstracts."""
        if (
            self.on("low_relevance")
            and relevance < self.min_relevance
            and not tx.shared_names(intent.names, texts)
        ):
            return Refusal("low_relevance", f"(best {relevance:.2f} < {self.min_relevance:.2f})")
        missing = unstated_focus(intent, texts) if self.on("unstated_focus") else []
        if missing:
            return Refusal("unstated_focus", f"({' '.join(missing)!r})")
        return None

    def after_generation(
        self,
        draft: str,
        checked: Checked,
        intent: Intent,
        judge: Callable[[Checked], bool | None] | None = None,
    ) -> Refusal | None:
        """The refusal of a checked draft, if a rule makes one. `judge` asks the model whether the
        checked answer gives what the question asks for (None: it could not tell)."""
        if self.on("model_declined") and (not draft.strip() or is_refusal(draft)):
            return Refusal("model_declined")
        if self.on("no_supported_sentence") and not checked.supported:
            return Refusal("no_supported_sentence")
        if self.on("restates_question") and restates_question(intent, checked):
            return Refusal("restates_question")
        if self.on("answer_removed") and answer_removed(intent, checked):
            return Refusal("answer_removed")
        if self.on("off_question") and off_question(intent, checked):
            return Refusal("off_question")
        if (
            self.on("judged_unanswered")
            and _gradable(intent)
            and judge is not None
            and judge(checked) is False
        ):
            return Refusal("judged_unanswered")
        return None


def _gradable(intent: Intent) -> bool:
    """Whether the model's grade (`judged_unanswered`) can decide: asked for a number or a paper,
    the form of the answer tells (the `wanted` stage, `paper_fit`); a follow-up means what the
    conversation says, which the grade's short prompt does not show (asked with the paper named,
    the default model still graded right follow-up answers unanswered on dev)."""
    return intent.wants is Wanted.ANY and not intent.refers_back


@dataclass
class Refusal:
    """Why an answer is not shown: the rule's code and the sentence the user reads."""

    code: str
    detail: str = ""

    @property
    def reason(self) -> str:
        return f"{REASONS[self.code]} {self.detail}".strip()


def trust_from_settings(settings) -> Trust:
    return Trust(
        support_threshold=settings.support_threshold,
        min_relevance=settings.min_relevance,
        min_coverage=settings.min_coverage,
        min_paper_fit=settings.min_paper_fit,
        trim_spans=settings.trim_spans,
        checks=tuple(settings.claim_checks),
        rules=tuple(settings.abstention_rules),
    )


def unstated_focus(intent: Intent, texts: Sequence[str]) -> list[str]:
    """For "how many X" / "how much X": the words of X that no text contains. A question that asks
    for a paper counts nothing (`Intent.counts` is empty): its "how many X" describes the paper."""
    stated: set[str] = set().union(*(tx.content_words(t) for t in texts))
    return [w for w in intent.counts if not tx.content_words(w) <= stated]


def _shown_claims(intent: Intent, checked: Checked) -> list[str]:
    """The shown claims as the rules read them: without markers, and without the cited papers'
    titles unless the question asks for a paper (a title is then the answer; otherwise it only
    repeats where the claim comes from: "The datasets used are “<title>” [1]." names no dataset)."""
    claims = [strip_markers(s.text) for s in checked.sentences if s.claim]
    if intent.asks_for_paper:
        return claims
    titles = [cited.title for cited in checked.citations]
    return [tx.without_titles(c, titles) for c in claims]


def _quoted_paper(checked: Checked) -> bool:
    """A paper the model confirmed as the answer (`paper_fit`): its quoted sentence is the answer,
    in whatever words it uses."""
    return any(c.name == "paper_fit" and c.passed for s in checked.sentences for c in s.checks)


def restates_question(intent: Intent, checked: Checked) -> bool:
    """Every shown sentence says only what the question said ("What temperature is used in X?"
    -> "The temperature is used in X [1]."): no content word beyond the question's. A paper's
    title counts as new only when the question asks for a paper (`_shown_claims`). A yes/no
    question may be answered in its own words."""
    claims = _shown_claims(intent, checked)
    if intent.yes_no or not claims:
        return False
    asked = intent.words | tx.meta_stems()
    return all(not tx.content_words(c) - asked and not _new_terms(intent, c) for c in claims)


def _new_terms(intent: Intent, claim: str) -> list[str]:
    """Terms made of stop words only ("where-then-what"), quoted or hyphenated, that the question
    does not have: a name with no content word, new although `content_words` cannot see it. A
    term with content words ("fine-tuned") is judged by its content words."""
    asked = intent.question.lower()
    terms = re.findall(r"[\"“]([^\"”]{2,60})[\"”]|\b(\w+(?:-\w+)+)\b", claim)
    return [t for pair in terms for t in pair if t and not tx.content_words(t) and t.lower() not in asked]


def answer_removed(intent: Intent, checked: Checked) -> bool:
    """The removed sentence that shares most words with the question (where a model states its
    answer: "GNNs handle toxicity prediction by ...") shares at least two, and no shown sentence
    shares more than one: what is left is true context about something else, not the answer.
    A confirmed paper (`_quoted_paper`) is the answer: the removed restatement of the question is
    not a lost answer."""
    if _quoted_paper(checked):
        return False
    removed = max((_shared(intent, s.text) for s in checked.removed), default=0)
    shown = max((_shared(intent, c) for c in _shown_claims(intent, checked)), default=0)
    return removed >= 2 and shown <= 1


def off_question(intent: Intent, checked: Checked) -> bool:
    """No shown sentence shares a content word with the question: the answer is true of its
    source and about something else (a sports question answered with a game-theory paper's
    hardness result). A follow-up's words point back ("What did they train on?"), a
    which-paper answer's title is the answer, and a confirmed paper is the answer in its own words."""
    if intent.refers_back or intent.asks_for_paper or _quoted_paper(checked):
        return False
    claims = _shown_claims(intent, checked)
    return bool(claims) and all(_shared(intent, c) == 0 for c in claims)


def _shared(intent: Intent, text: str) -> int:
    """How many of the question's content words (not its meta words: paper, method) `text` has."""
    return len((intent.words - tx.meta_stems()) & tx.content_words(text))
