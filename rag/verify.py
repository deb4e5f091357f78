"""The one home of trust: whether an answer sentence is backed by the passage it cites, and
whether an answer is shown at all.

Claim checks (each a small function returning a `Check`, recorded per sentence):
  numbers     every number in the claim occurs in the cited passage
  names       every method/model/dataset name in the claim occurs in the cited passage
  polarity    the claim does not negate what its best-matching passage sentence states, or the reverse
  direction   the claim does not reverse a direction (increases/reduces, more/less, from X to Y)
  coverage    most of the claim's content words occur in the passage (another paper's finding does not)
  similarity  the claim is about what the passage says (embedding cosine + shared content words)

Abstention rules (named, each can be switched off for an ablation, see `Trust.rules`):
  low_relevance          no retrieved passage is similar enough to the question: refuse before generating
  unstated_quantity      "how many X" when no retrieved abstract mentions X: refuse before generating
  model_declined         the model said the sources do not answer
  no_supported_sentence  no sentence of the draft passed its checks (answers from memory, inventions)
  judged_unanswered      asked apart from the sources, the model says the checked answer does not
                         give what the question asks for

`citewise verify` uses `verify_claim`, the same checks against a whole abstract.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from rag import text as tx
from rag.citations import (
    attach_trailing_markers,
    name_noun_markers,
    parse_markers,
    render_text,
    renumber,
    strip_markers,
)
from rag.evidence import Evidence, Sentence
from rag.types import AnswerSentence, Check, Citation

CLAIM_CHECKS = ("numbers", "names", "polarity", "direction", "coverage", "similarity")
RULES = ("low_relevance", "unstated_quantity", "model_declined", "no_supported_sentence", "judged_unanswered")
PRE_GENERATION_RULES = ("low_relevance", "unstated_quantity")

REFUSAL = "The indexed papers do not answer this."
REASONS = {
    "low_relevance": "no indexed passage is close enough to the question",
    "unstated_quantity": "the sources never mention what the question counts",
    "model_declined": "the model found no answer in the sources",
    "no_supported_sentence": "no sentence of the draft is backed by the sources",
    "judged_unanswered": "the checked answer does not give what the question asks for",
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


# ---- claim checks

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


def check_names(claim: str, passage: str) -> Check:
    # "RRM-aligned", "MoE-based": the name is what comes before a lower-case suffix.
    wanted = {re.sub(r"(?<=[A-Za-z0-9])-[a-z]+$", "", n) if tx.is_name(re.sub(r"-[a-z]+$", "", n)) else n
              for n in tx.names(claim)}  # fmt: skip
    missing = sorted(n for n in wanted if not tx.name_in(n, passage))
    if missing:
        return Check("names", False, f"{_listed('name', missing)} not in the source")
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


def check_coverage(claim_words: set[str], passage: str, minimum: float) -> Check:
    """Share of the claim's content words (words about the sources themselves aside) that occur
    in the passage: on the dev claims, true paraphrases keep >= 0.85 (10th percentile), another
    paper's sentences <= 0.22 (median)."""
    words = claim_words - _META_STEMS
    share = len(words & tx.content_words(passage)) / len(words) if words else 1.0
    if share < minimum:
        return Check("coverage", False, f"most of its words are not in the source ({share:.0%} are)")
    return Check("coverage", True)


def support_score(claim_vector: np.ndarray, claim_words: set[str], sentence: Sentence) -> float:
    """How well one source sentence covers a claim: cosine blended with shared content words."""
    cos = float(claim_vector @ sentence.vector)
    lexical = len(claim_words & tx.content_words(sentence.text)) / len(claim_words) if claim_words else 0.0
    return 0.6 * cos + 0.4 * lexical


@dataclass
class Verdict:
    """A claim against one source: the checks, the best-matching sentence and its support."""

    number: int
    checks: list[Check]
    best: Sentence | None
    score: float

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def has_claim(claim: str) -> bool:
    """Whether a sentence asserts anything checkable ("Yes." and "See [1]." do not)."""
    return bool(tx.numbers(claim) or tx.names(claim) or len(tx.content_words(claim) - _META_STEMS) >= 2)


_META_STEMS = {tx.stem(w) for w in tx.META_WORDS}


@dataclass
class Trust:
    """The thresholds and the enabled checks and rules: one object, built from settings."""

    support_threshold: float = 0.45
    min_relevance: float = 0.23
    min_coverage: float = 0.5
    checks: tuple[str, ...] = CLAIM_CHECKS
    rules: tuple[str, ...] = RULES

    def without(self, name: str) -> Trust:
        """The same trust with one check or rule switched off (for ablations)."""
        return replace(
            self,
            checks=tuple(c for c in self.checks if c != name),
            rules=tuple(r for r in self.rules if r != name),
        )

    def verify(self, claim: str, vector: np.ndarray, source: Evidence, *, whole: bool = False) -> Verdict:
        """Run the enabled checks of `claim` against one source (its shown sentences, or all of
        them when `whole`); the title counts as part of the source."""
        shown = (
            source.sentences if whole or not source.chosen else [source.sentences[i] for i in source.chosen]
        )
        passage = source.paper.title + ". " + " ".join(s.text for s in shown)
        words = tx.content_words(claim)
        scored = [(support_score(vector, words, s), s) for s in shown]
        score, best = max(scored, key=lambda t: t[0]) if scored else (0.0, None)
        best_text = best.text if best else ""
        run = {
            "numbers": lambda: check_numbers(claim, passage),
            "names": lambda: check_names(claim, passage),
            "polarity": lambda: check_polarity(claim, best_text),
            "direction": lambda: check_direction(claim, best_text),
            "coverage": lambda: check_coverage(words, passage, self.min_coverage),
            "similarity": lambda: Check(
                "similarity",
                score >= self.support_threshold,
                ""
                if score >= self.support_threshold
                else f"the source is about something else ({score:.2f})",
            ),
        }
        return Verdict(source.number, [run[name]() for name in self.checks], best, round(score, 4))

    # ---- rules

    def on(self, rule: str) -> bool:
        return rule in self.rules

    def before_generation(self, question: str, relevance: float, abstracts: Sequence[str]) -> Refusal | None:
        """The refusal before generating, if a rule makes one."""
        if self.on("low_relevance") and relevance < self.min_relevance:
            return Refusal("low_relevance", f"(best {relevance:.2f} < {self.min_relevance:.2f})")
        missing = unstated_focus(question, abstracts) if self.on("unstated_quantity") else []
        if missing:
            return Refusal("unstated_quantity", f"({' '.join(missing)!r})")
        return None

    def after_generation(
        self,
        draft: str,
        checked: Checked,
        question: str,
        judge: Callable[[Checked], bool | None] | None = None,
    ) -> Refusal | None:
        """The refusal of a checked draft, if a rule makes one. `judge` asks the model whether the
        checked answer gives what the question asks for (None: it could not tell)."""
        if self.on("model_declined") and (not draft.strip() or is_refusal(draft)):
            return Refusal("model_declined")
        if self.on("no_supported_sentence") and not checked.supported:
            return Refusal("no_supported_sentence")
        if self.on("judged_unanswered") and judge is not None and judge(checked) is False:
            return Refusal("judged_unanswered")
        return None


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
        checks=tuple(settings.claim_checks),
        rules=tuple(settings.abstention_rules),
    )


_QUANTITY = re.compile(r"\bhow (?:many|much) ((?:[\w-]+ ){0,1}[\w-]+)", re.I)


def unstated_focus(question: str, texts: Sequence[str]) -> list[str]:
    """For "how many X" / "how much X": the words of X that no text contains."""
    m = _QUANTITY.search(question)
    if not m:
        return []
    focus = []
    for word in m.group(1).split():
        if word.lower() in tx.STOP_WORDS:
            break
        focus.append(word)
    stated: set[str] = set().union(*(tx.content_words(t) for t in texts))
    return [w for w in focus if not tx.content_words(w) <= stated]


# ---- draft cleaning

_META = re.compile(
    r"^\W*(this|that|it|these|the (answer|information))\b[^.]{0,40}\b(stated|mentioned|described|found|"
    r"noted|explained|given)\s+(in|by)\b([^.]{0,40}\b(source|text|abstract|paper)s?\b|\W*$)",
    re.I,
)
_MARKUP = re.compile(r"</?source[^>]*>")


# "by Nayoung Kim et al.": authors are not in an abstract, so nothing can back them.
_AUTHORS = re.compile(r",?\s+(?:by|from)\s+(?:[A-Z][\w'-]+\s+){1,3}et al\.?(?=[\s,.;])")
_ENUMERATOR = re.compile(r"(?m)^\s*(?:\d{1,2}[.)]|[-*•])\s+")


def clean_draft(text: str) -> str:
    """Drop echoed prompt markup, author attributions ("by X et al.", which no abstract can back),
    list enumerators ("1.", "-": a list item is a sentence, its number no claim) and sentences that
    only point at the sources."""
    text = _AUTHORS.sub("", _MARKUP.sub("", text))
    lines = [line.strip() for line in _ENUMERATOR.sub("", text).splitlines() if line.strip()]
    # Lines stay lines: a list item is a sentence of its own, whatever its punctuation.
    kept = [" ".join(s for s in tx.sentences(line) if not _META.search(strip_markers(s))) for line in lines]
    kept = [line for line in kept if line]
    return "\n".join(kept) if kept else text.strip()


# ---- a whole answer


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


def _unquote_titles(sentence: str, titles: Sequence[str]) -> str:
    """The sentence without the paper titles it names (in any quotes, or none)."""
    for title in titles:
        sentence = re.sub(r"[\"“”'‘’]?" + re.escape(title) + r"[\"“”'‘’]?", " ", sentence, flags=re.I)
    return re.sub(r"\s+", " ", sentence).strip()


def _where(ev: Evidence) -> str:
    title = ev.paper.display_title
    return f"“{title[:60]}{'…' if len(title) > 60 else ''}”"


def check_answer(draft: str, evidence: Sequence[Evidence], embedder, trust: Trust) -> Checked:
    """Check every sentence of `draft` against the sources it cites. A sentence whose cited
    source fails a check is given to another offered source that passes all of them (small
    models misplace markers), else removed and listed with its failed checks."""
    offered = {ev.number: ev for ev in evidence}
    titles = {n: ev.paper.title for n, ev in offered.items() if ev.paper.title}
    raw = [
        s
        for line in draft.splitlines()
        for s in tx.sentences(name_noun_markers(attach_trailing_markers(line), titles))
    ]
    plain = [strip_markers(t) for t in raw]
    # A paper named by its title is backed by that title; the rest of the sentence is checked.
    named = [[n for n, t in titles.items() if t.lower() in p.lower()] for p in plain]
    claims = [_unquote_titles(p, [titles[n] for n in ns]) for p, ns in zip(plain, named)]
    vectors = np.asarray(embedder.embed_batch(claims), dtype=np.float32) if claims else []
    invented = 0
    shown: list[AnswerSentence] = []
    removed: list[AnswerSentence] = []
    best: dict[int, tuple[float, Sentence]] = {}
    supported: list[str] = []
    for text, sentence, claim, names_, vec in zip(raw, plain, claims, named, vectors):
        cited = list(dict.fromkeys(parse_markers(text)))
        invented += sum(1 for n in cited if n not in offered)
        cited = [n for n in cited if n in offered]
        if not sentence:
            continue
        if not has_claim(claim) or sentence.endswith(":"):  # "Yes.", "The papers are:"
            if names_:  # "The paper is “Title” [1].": the title is the answer
                for n in names_:
                    best.setdefault(n, (1.0, offered[n].sentences[0]))
                shown.append(AnswerSentence(sentence, names_, True, 1.0, False, [Check("names", True)]))
                supported.append(claim)
            else:
                shown.append(AnswerSentence(sentence, [], False, 0.0, claim=False))
            continue
        # A sentence that names a paper by its title must be backed by that paper.
        candidates = {n: offered[n] for n in names_} or offered
        verdicts = {n: trust.verify(claim, vec, ev) for n, ev in candidates.items()}
        good = [n for n in cited if n in verdicts and verdicts[n].passed]
        attributed = False
        if not good:
            passing = [n for n in verdicts if verdicts[n].passed]
            if passing:
                good, attributed = [max(passing, key=lambda n: verdicts[n].score)], True
        if good:
            for n in good:
                v = verdicts[n]
                if v.best is not None and (n not in best or v.score > best[n][0]):
                    best[n] = (v.score, v.best)
            checks = verdicts[good[0]].checks
            score = max(verdicts[n].score for n in good)
            shown.append(AnswerSentence(sentence, good, True, score, attributed, checks))
            supported.append(claim)
            continue
        # Report the checks against the source the model cited, or the closest one.
        checked_cited = [n for n in cited if n in verdicts]
        blame = (
            checked_cited[0]
            if checked_cited
            else max(verdicts, key=lambda n: verdicts[n].score, default=None)
        )
        checks = []
        if blame is not None:
            checks = [
                Check(c.name, c.passed, c.detail.replace("the source", _where(offered[blame])))
                for c in verdicts[blame].checks
            ]
        removed.append(
            AnswerSentence(sentence, [], False, verdicts[blame].score if blame else 0.0, False, checks)
        )
    citations = renumber(shown, offered, best)
    text = render_text(shown, {c.number: c.title for c in citations})
    return Checked(text, shown, removed, citations, invented, supported)
