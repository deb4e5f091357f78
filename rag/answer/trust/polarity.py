"""Which way a claim points, word by word: what it negates (`polarity_terms`, `check_polarity`),
which way it moves a quantity (up or down, "from X to Y"), and who outperforms whom
(`check_direction`). Both compare the claim with the one passage sentence that matches it best."""

from __future__ import annotations

import functools
import re

from rag import text as tx
from rag.types import Check

NEGATION = re.compile(
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


def polarity_terms(text: str, premise: frozenset[str] | set[str] = frozenset()) -> tuple[set[str], set[str]]:
    """(stems in the scope of a negation cue, stems outside any): "X does not improve Y" puts
    improve and Y in the first set; in "training-free", "free" negates the word before it. A
    negation whose first governed word the `premise` negates too (the question's own negated
    stems: "what does the layer fail to learn?") repeats the question, and counts as neither."""
    toks = _tokens(text)
    negated = [False] * len(toks)
    repeated = [False] * len(toks)
    for i, t in enumerate(toks):
        if not NEGATION.fullmatch(t):
            continue
        if t == "free":
            if i > 0:
                negated[i - 1] = True
            continue
        first = next((tx.stem(w) for w in toks[i + 1 : i + 4] if _is_content(w) and w != "to"), "")
        if first in premise:
            for j in range(i + 1, min(len(toks), i + 1 + 2 * _SCOPE)):
                if toks[j] in _BOUNDARY_WORDS:
                    break
                repeated[j] = True
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
    for t, n, r in zip(toks, negated, repeated):
        if _is_content(t) and not NEGATION.fullmatch(t) and not r:
            (neg if n else pos).add(tx.stem(t))
    return neg, pos


@functools.lru_cache(maxsize=32)
def _premise(question: str) -> frozenset[str]:
    """What the question negates, read once per question, not once per sentence and source."""
    return frozenset(polarity_terms(question)[0]) if question else frozenset()


def check_polarity(claim: str, best: str, question: str = "") -> Check:
    """A word the claim only negates that the source sentence only states, or the reverse; a
    negation the claim repeats from the `question` is the question's premise, not a claim."""
    c_neg, c_pos = polarity_terms(claim, _premise(question))
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
    claimed, stated = _roles(claim), _roles(best)
    if claimed and stated:
        (c_win, c_lose), (s_win, s_lose) = claimed, stated
        # Each side of the claim is as close or closer to the other side of the source, and at
        # least two words closer in all: "B is outperformed by A" for "A outperforms B".
        winner = len(c_win & s_lose) - len(c_win & s_win)
        loser = len(c_lose & s_win) - len(c_lose & s_lose)
        if winner >= 0 and loser >= 0 and winner + loser >= 2:
            return Check("direction", False, "the sentence swaps who outperforms whom in the source")
    return Check("direction", True)


_BEATS = re.compile(
    r"\b(?:(?:is|are|was|were|be|being|been)\s+(?:\w+ly\s+)?(?P<passive>outperformed|surpassed|beaten|exceeded)"
    r"\s+by|outperform(?:s|ed|ing)?|surpass(?:es|ed|ing)?|beats?|beating|better than|superior to)\b"
)
_ENDS_SIDE = re.compile(r"[,;:()]|\b(?:in|on|across|at|for|with|while|whereas|and achiev\w*)\b")


def _roles(text: str) -> tuple[set[str], set[str]] | None:
    """(the winner's content stems, the loser's) of the first "A outperforms B" ("B is outperformed
    by A", "A is better than B") in `text`. A side ends at a clause break or at the preposition
    that starts what they are compared on ("in sample efficiency"), which either side may carry;
    with no words after the last comma before the verb, the subject is the whole clause before it
    ("We propose X, outperforming Y")."""
    norm = tx.normalize(text)
    m = _BEATS.search(norm)
    if not m:
        return None
    head = norm[: m.start()]
    before = tx.content_words(re.split(r"[,;:()]", head)[-1]) or tx.content_words(head)
    after = tx.content_words(_ENDS_SIDE.split(norm[m.end() :], maxsplit=1)[0])
    if not before or not after:
        return None
    return (after, before) if m.group("passive") else (before, after)
