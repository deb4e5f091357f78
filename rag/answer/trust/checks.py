"""Claim checks: each a small function returning a `Check` (name, passed, why not). A claim is
checked against one source; `Verdict` collects the checks with the best-matching sentence."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from rag import text as tx
from rag.search.evidence import Sentence
from rag.types import AnswerSentence, Check, Citation


class Stance(StrEnum):
    """What an abstract says of a claim (the model's verdict, `rag.answer.verdicts.stance`)."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNSTATED = "unstated"


_NEGATION = re.compile(
    r"\b(not|no|never|none|neither|nor|cannot|can't|don't|doesn't|isn't|aren't|won't|didn't|without|"
    r"fails?|failed|unable|lacks?|lacking|eliminat\w*|avoid\w*|obviat\w*|stops?|stopped|prevents?|"
    r"prevented|free)\b"
)
_NOT_NEGATION = re.compile(r"\bnot only\b|\bnone other than\b|\bno more than\b|\bnot least\b")
UP = frozenset(
    tx.stem(w)
    for w in "increase increases increased increasing improve improves improved improving raise raises boost "
    "boosts enhance enhances enhanced higher more larger greater faster better gain gains grow grows rise rises "
    "outperform outperforms outperforming exceed exceeds maximize accelerate accelerates expand expands "
    "strengthen stronger longer above".split()
)
DOWN = frozenset(
    tx.stem(w)
    for w in "decrease decreases decreased decreasing reduce reduces reduced reducing degrade degrades degraded "
    "lower less fewer smaller slower worse loss losses shrink shrinks fall falls drop drops decline declines "
    "underperform underperforms minimize decelerate weaken weaker shorter below harm harms hurt hurts "
    "diminish diminishes impair impairs reduction reductions slow slows".split()
)
_FROM_TO = re.compile(r"\bfrom\s+(\d+(?:\.\d+)?)\s*%?\s+to\s+(\d+(?:\.\d+)?)")


def _tokens(text: str) -> list[str]:
    """Words and clause boundaries ("," ";" ":" "(" ")") in order, lower case."""
    text = _NOT_NEGATION.sub(" ", tx.normalize(text)).replace("-", " ")
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+)?(?:'[a-z]+)?|[,;:()]", text)


_BOUNDARY_WORDS = {",", ";", ":", "(", ")", "but", "while", "whereas", "which", "although", "though"}
_SCOPE = 5  # content words a negation cue governs, at most, within its clause


def _is_content(token: str) -> bool:
    return token not in tx.STOP_WORDS and token not in _BOUNDARY_WORDS and not token[0].isdigit()


def polarity_terms(text: str) -> tuple[set[str], set[str]]:
    """(stems in the scope of a negation cue, stems outside any): "X does not improve Y" puts
    improve and Y in the first set; in "training-free", "free" negates the word before it."""
    toks = _tokens(text)
    negated = [False] * len(toks)
    for i, t in enumerate(toks):
        if not _NEGATION.fullmatch(t):
            continue
        if t == "free":
            if i > 0:
                negated[i - 1] = True
            continue
        start = i + 1
        if t.startswith(("stop", "prevent")):  # "stops X from emerging" negates what follows "from"
            start = next((j + 1 for j in range(i + 1, min(len(toks), i + 6)) if toks[j] == "from"), start)
        governed = 0
        for j in range(start, len(toks)):
            # "without text to improve X": the purpose clause after "to"/"by" is not negated;
            # a copula starts another predicate ("stops X from emerging is replacing Y").
            if (
                toks[j] in _BOUNDARY_WORDS
                or (governed and toks[j] in ("to", "by", "is", "are", "was", "were"))
                or governed >= _SCOPE
            ):
                break
            negated[j] = True
            governed += _is_content(toks[j])
    neg, pos = set(), set()
    for t, n in zip(toks, negated):
        if _is_content(t) and not _NEGATION.fullmatch(t):
            (neg if n else pos).add(tx.stem(t))
    return neg, pos


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


def check_numbers(claim: str, passage: str) -> Check:
    stated = tx.numbers(passage)
    claimed = tx.numbers(claim, words=False)
    operands = claimed & stated  # only numbers the claim itself states may be combined
    missing = sorted(n for n in claimed - stated if not _derived(n, operands))
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


def check_names(claim: str, passage: str, subject: Sequence[str] = (), paper: str = "") -> Check:
    """The claim's names are in the passage; the `subject` names a heading above the claim gives
    ("The two steps of LoLCATs are:") are in the `paper` (title and abstract)."""
    # "RRM-aligned", "MoE-based": the name is what comes before a lower-case suffix.
    wanted = {re.sub(r"(?<=[A-Za-z0-9])-[a-z]+$", "", n) if tx.is_name(re.sub(r"-[a-z]+$", "", n)) else n
              for n in tx.names(claim)}  # fmt: skip
    missing = sorted(n for n in wanted if not tx.name_in(n, passage))
    if missing:
        return Check("names", False, f"{_listed('name', missing)} not in the source")
    lacking = [n for n in subject if not tx.name_in(n, paper)]
    if lacking:
        return Check("names", False, f"the name {lacking[0]} of the heading above it is not in the source")
    return Check("names", True)


def check_polarity(claim: str, best: str) -> Check:
    """A word the claim only negates that the source sentence only states, or the reverse."""
    c_neg, c_pos = polarity_terms(claim)
    p_neg, p_pos = polarity_terms(best)
    for word in sorted((c_neg - c_pos) & (p_pos - p_neg)):
        return Check("polarity", False, f"the sentence negates '{word}…', the source does not")
    for word in sorted((c_pos - c_neg) & (p_neg - p_pos)):
        return Check("polarity", False, f"the source negates '{word}…', the sentence does not")
    return Check("polarity", True)


def _directions(text: str) -> list[tuple[str, str, set[str], set[str]]]:
    """(up/down, the word's stem, up to three content stems before it, three after) per direction
    word; a context stops at the next direction word ("6x faster and 18x fewer parameters")."""
    toks = [(t, tx.stem(t)) for t in _tokens(text)]
    marks = [i for i, (_, s) in enumerate(toks) if s in UP or s in DOWN]
    content = [(i, s) for i, (t, s) in enumerate(toks) if _is_content(t) and s not in UP and s not in DOWN]
    out = []
    for k, i in enumerate(marks):
        start = marks[k - 1] if k else -1
        end = marks[k + 1] if k + 1 < len(marks) else len(toks)
        before = [st for j, st in content if start < j < i][-3:]
        after = [st for j, st in content if i < j < end][:3]
        out.append(("up" if toks[i][1] in UP else "down", toks[i][1], set(before), set(after)))
    return out


def check_direction(claim: str, best: str) -> Check:
    """The claim moves something the other way than the source sentence does: the direction word
    of the source that shares most context with the claim's (what follows counts twice) is of
    the opposite group, and none of the same group is as close."""
    source = _directions(best)
    for group, word, before, after in _directions(claim):
        context = before | after
        if not context or not source:
            continue
        # The same word in the source counts as much as two words of shared context.
        scored = [(len(context & (b | a)) + len(after & a) + 2 * (w == word), g) for g, w, b, a in source]
        top = max(score for score, _ in scored)
        if top >= min(2, len(context)) and all(g != group for score, g in scored if score == top):
            return Check("direction", False, f"the sentence says '{group}', the source the opposite")
    a, b = _FROM_TO.search(tx.normalize(claim)), _FROM_TO.search(tx.normalize(best))
    if a and b and (a.group(1), a.group(2)) == (b.group(2), b.group(1)):
        return Check("direction", False, "the sentence reverses the source's 'from … to …'")
    return Check("direction", True)


def check_coverage(
    claim_words: set[str], passage: str, minimum: float, given: frozenset[str] | set[str] = frozenset()
) -> Check:
    """Share of the claim's content words (words about the sources themselves aside) that occur
    in the passage, or in `given` (words the claim may take from elsewhere), which must be more
    than `minimum`: true paraphrases keep most of their words, another paper's sentences few.
    Exactly half is not most: stems meet by chance ("multiple" and "multiplications")."""
    words = claim_words - tx.meta_stems()
    share = len(words & (tx.content_words(passage) | given)) / len(words) if words else 1.0
    if share <= minimum:
        return Check("coverage", False, f"most of its words are not in the source ({share:.0%} are)")
    return Check("coverage", True)


def check_topic(claim_words: set[str], asked: frozenset[str] | set[str], source_text: str) -> Check:
    """A sentence that repeats two or more of the question's words ("GNNs handle toxicity
    prediction by ...") says the cited paper is about what was asked: most of those words must
    occur somewhere in that paper (title and abstract). Coverage alone let such a sentence
    through when the rest of it was copied from an unrelated paper: the question's words were
    under half of the sentence."""
    echoed = (claim_words & asked) - tx.meta_stems()
    if len(echoed) < 2:
        return Check("topic", True)
    missing = sorted(echoed - tx.content_words(source_text))
    if len(missing) * 2 > len(echoed):
        return Check("topic", False, f"the source never mentions {', '.join(missing)} (from the question)")
    return Check("topic", True)


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

    @property
    def passage(self) -> str:
        """What the `entailment` verdict is asked about: a claim often joins two sentences."""
        return " ".join(s.text for s in self.close)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


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
