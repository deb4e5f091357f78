"""A whole draft checked: cleaned, split into sentences, each sentence checked against the sources
it cites (or moved to one that passes), failures removed and kept with their reasons."""

from __future__ import annotations

import functools
import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from rag import text as tx
from rag.answer.citations import (
    attach_trailing_markers,
    name_noun_markers,
    parse_markers,
    render_text,
    renumber,
    strip_markers,
)
from rag.answer.trust.checks import Checked, has_claim
from rag.answer.trust.rules import Trust
from rag.questions import Intent
from rag.search.evidence import Evidence, Sentence, best_told, fit
from rag.types import AnswerSentence, Check

_META = re.compile(
    r"^\W*(this|that|it|these|the (answer|information))\b[^.]{0,40}\b(stated|mentioned|described|found|"
    r"noted|explained|given)\s+(in|by)\b([^.]{0,40}\b(source|text|abstract|paper)s?\b|\W*$)",
    re.I,
)
_MARKUP = re.compile(r"</?source[^>]*>")


# "by Nayoung Kim et al.": authors are not in an abstract, so nothing can back them.
_AUTHORS = re.compile(r",?\s+(?:by|from)\s+(?:[A-Z][\w'-]+\s+){1,3}et al\.?(?=[\s,.;])")
_ENUMERATOR = re.compile(r"(?m)^\s*(?:\d{1,2}[.)]|[-*•])\s+")


def clean_draft(
    text: str, titles: Sequence[str] = (), *, paper_markers: Mapping[int, str] | None = None
) -> str:
    """Drop echoed prompt markup, author attributions ("by X et al.", which no abstract can back),
    list enumerators ("1.", "-": a list item is a sentence, its number no claim) and sentences that
    only point at the sources, unless they name a paper by one of its `titles` ("It can be found
    in the source titled ..." answers a which-paper question).

    `paper_markers` (the offered titles by source number, when the question asks for a paper): a
    marker used as a noun names its paper, so "It can be found in [1]" is that answer too, and
    gets the title written in before the pointers go (the default model often leaves the title
    out)."""
    text = _AUTHORS.sub("", _MARKUP.sub("", text))
    lines = [line.strip() for line in _ENUMERATOR.sub("", text).splitlines() if line.strip()]
    if paper_markers:
        lines = [name_noun_markers(attach_trailing_markers(line), paper_markers) for line in lines]
        titles = [*titles, *paper_markers.values()]
    low = [t.lower() for t in titles if t]

    def pointer(sentence: str) -> bool:
        plain = strip_markers(sentence)
        return bool(_META.search(plain)) and not any(t in plain.lower() for t in low)

    # Lines stay lines: a list item is a sentence of its own, whatever its punctuation.
    kept = [" ".join(s for s in tx.sentences(line) if not pointer(s)) for line in lines]
    kept = [line for line in kept if line]
    return "\n".join(kept) if kept else text.strip()


# ---- a whole answer


def _unquote_titles(sentence: str, titles: Sequence[str]) -> str:
    """The sentence without the paper titles it names (in any quotes, or none)."""
    for title in titles:
        sentence = re.sub(r"[\"“”'‘’]?" + re.escape(title) + r"[\"“”'‘’]?", " ", sentence, flags=re.I)
    return re.sub(r"\s+", " ", sentence).strip()


def _where(ev: Evidence) -> str:
    title = ev.paper.display_title
    return f"“{title[:60]}{'…' if len(title) > 60 else ''}”"


def _quote(ev: Evidence, sentence: Sentence) -> str:
    return f"“{ev.paper.display_title}”: “{sentence.text.rstrip('.')}”."


# confirm(source, question): does the source's paper answer the question (or the alternative of it
# that the paper fits)?
Confirm = Callable[[Evidence, str], "bool | None"]


def _paper_answer(
    described: Sequence[tuple[str, np.ndarray, set[str]]], ev: Evidence, trust: Trust, confirm: Confirm
) -> tuple[float, Sentence, Check] | None:
    """Asked which paper, a sentence that names one in the question's own words ("The work by
    “X” shows that <the question's words>", "It is titled “X” [1]") claims that the paper is what
    the question describes. The claim checks cannot tell a paraphrase from a detail the paper does
    not give, so it is checked twice: the paper's best sentence must fit the description (cosine +
    word overlap >= `min_paper_fit`) and the model, shown the paper's evidence, must confirm it.
    The sentence shown is then that paper sentence, quoted: the restatement is never shown as a
    fact. `described`: what the question describes (`Intent.described`) and, asked for
    papers that do X or Y, each of X and Y: embedded, with their content words; the paper is
    measured against the one it fits best. Returns (fit, the sentence, the check), or None."""
    score, asked, vector, words = max(
        ((max((fit(v, w, s) for s in ev.sentences), default=0.0), q, v, w) for q, v, w in described),
        key=lambda t: t[0],
    )
    # Asked "which papers do X or Y?", a paper doing X is not "the answer" to the whole: the model
    # is asked about the alternative the paper fits.
    if score < trust.min_paper_fit or confirm(ev, asked) is not True:
        return None
    sentence = best_told(vector, words, ev)
    detail = f"the model says this paper answers the question (fit {score:.2f})"
    return score, sentence, Check("paper_fit", True, detail)


def check_answer(
    draft: str,
    evidence: Sequence[Evidence],
    embedder,
    trust: Trust,
    intent: Intent,
    confirm: Confirm | None = None,
) -> Checked:
    """Check every sentence of `draft` against the sources it cites. A sentence whose cited
    source fails a check is given to another offered source that passes all of them (small
    models misplace markers); failing that, a sentence joining two statements ("X is 11.07, and
    Y works in Lean.") is checked clause by clause, and what still fails is removed and listed
    with its failed checks.

    Asked for a paper, a sentence that names one by its title ("“BirdSet: ...” introduces a
    benchmark for classifying bird sounds") says that paper is what the question describes, in
    the question's words: those words count as covered, and the similarity check decides whether
    the paper is about what the question asks. A sentence that only names a paper in the
    question's words says nothing the checks can test but the name: asked for one paper, it is
    put to `confirm` (the model: is this paper the answer to the question?) instead; asked for
    several, when it fails the checks. See `_paper_answer`."""
    offered = {ev.number: ev for ev in evidence}
    titles = {n: ev.paper.title for n, ev in offered.items() if ev.paper.title}
    raw = [
        s
        for line in draft.splitlines()
        for s in tx.sentences(name_noun_markers(attach_trailing_markers(line), titles))
    ]

    def prepared(texts: Sequence[str], whole: bool) -> list[tuple]:
        plain = [strip_markers(t) for t in texts]
        # A paper named by its title is backed by that title; the rest of the sentence is checked.
        named = [[n for n, t in titles.items() if t.lower() in p.lower()] for p in plain]
        claims = [_unquote_titles(p, [titles[n] for n in ns]) for p, ns in zip(plain, named)]
        vectors = np.asarray(embedder.embed_batch(claims), dtype=np.float32) if claims else []
        return list(zip(texts, plain, claims, named, vectors, [whole] * len(texts)))

    queue = deque(prepared(raw, True))
    question_words = intent.words
    asked = question_words if intent.asks_for_paper else frozenset()
    one_paper = bool(asked) and not intent.asks_for_papers
    invented = 0
    shown: list[AnswerSentence] = []
    removed: list[AnswerSentence] = []
    passage: dict[int, tuple[float, Sentence]] = {}  # the passage each cited source shows
    supported: list[str] = []
    rescued: set[int] = set()
    meta = tx.naming_stems()
    can_confirm = confirm is not None and "paper_fit" in trust.checks

    @functools.cache
    def described() -> list[tuple[str, np.ndarray, set[str]]]:  # embedded once, for whichever paper needs it
        texts = list(intent.described)
        vectors = np.asarray(embedder.embed_batch(texts), dtype=np.float32)
        return [(q, v, tx.content_words(t)) for q, v, t in zip(intent.variants, vectors, texts)]

    def by_paper(n: int) -> bool:
        """Show the named paper's quoted sentence instead, if it fits and the model confirms it."""
        if n in rescued:  # the paper is already shown with its quote
            return True
        paper = _paper_answer(described(), offered[n], trust, confirm)
        if paper is None:
            return False
        score, quoted, check = paper
        passage[n] = (score, quoted)
        rescued.add(n)
        shown.append(AnswerSentence(_quote(offered[n], quoted), [n], True, score, False, [check]))
        supported.append(quoted.text)
        return True

    def own_names(claim: str) -> list[str]:
        """The names of `claim` that tell the offered papers apart (not in every one of them)."""
        return [
            n
            for n in sorted(tx.names(claim))
            if not all(tx.name_in(n, ev.paper.text) for ev in offered.values())
        ]

    # "The two steps of LoLCATs are:": the lines under a heading are LoLCATs', so their source must
    # name LoLCATs; a heading none of whose lines stays goes too. Where it sits in `shown`, how
    # many sentences had been removed when it came, and the names it gives.
    heading: tuple[int, int] | None = None
    subject: list[str] = []
    asked_names = intent.names

    def close_heading() -> None:
        nonlocal heading, subject
        if heading and len(shown) == heading[0] + 1 and len(removed) > heading[1]:
            del shown[heading[0]]
        heading, subject = None, []

    while queue:
        text, sentence, claim, names_, vec, whole = queue.popleft()
        cited = list(dict.fromkeys(parse_markers(text)))
        invented += sum(1 for n in cited if n not in offered) if whole else 0
        cited = [n for n in cited if n in offered]
        if not sentence:
            continue
        # A line naming another paper (by its title, or as the question names it) is not under it.
        if sentence.endswith(":") or names_ or (tx.names(claim) & asked_names) - set(subject):
            close_heading()
        if sentence.endswith(":"):
            heading, subject = (len(shown), len(removed)), own_names(claim)
        if not has_claim(claim) or sentence.endswith(":"):  # "Yes.", "The papers are:"
            if names_ and one_paper and can_confirm and by_paper(names_[0]):
                continue  # "It can be found in “Title” [1].": shown as the paper's quoted sentence
            if names_:  # "The paper is “Title” [1].": the title is the answer
                for n in names_:
                    passage.setdefault(n, (1.0, offered[n].sentences[0]))
                shown.append(AnswerSentence(sentence, names_, True, 1.0, False, [Check("names", True)]))
                supported.append(claim)
            else:
                shown.append(AnswerSentence(sentence, [], False, 0.0, claim=False))
            continue
        answer = (names_ or cited)[:1]
        # The sentence says nothing but which paper it is, in the question's words.
        restates = bool(asked and answer) and can_confirm and not tx.content_words(claim) - asked - meta

        if restates and one_paper:
            # Asked for one paper, "The work by “X” shows that <the question's words>" claims that
            # X is what the question describes, which no passage sentence states in those words; a
            # near miss ("evaluates X on speech") would pass the checks on the name alone.
            if not by_paper(answer[0]):
                failed = Check(
                    "paper_fit", False, f"{_where(offered[answer[0]])} is not confirmed as the answer"
                )
                removed.append(AnswerSentence(sentence, [], False, 0.0, False, [failed]))
            continue
        # A sentence that names a paper by its title must be backed by that paper.
        candidates = {n: offered[n] for n in names_} or offered
        given = asked if names_ else frozenset()
        verdicts = {
            n: trust.verify(claim, vec, ev, given=given, asked=question_words, subject=subject)
            for n, ev in candidates.items()
        }
        good = [n for n in cited if n in verdicts and verdicts[n].passed]
        attributed = False
        if not good:
            passing = [n for n in verdicts if verdicts[n].passed]
            if passing:
                good, attributed = [max(passing, key=lambda n: verdicts[n].score)], True
        if good:
            for n in good:
                v = verdicts[n]
                # A source shows the passage behind the first sentence that cites it, which is
                # usually the answer itself; the best-backed one is often a side remark copied
                # word for word.
                if v.best is not None and n not in passage:
                    passage[n] = (v.score, v.best)
            checks = verdicts[good[0]].checks
            score = max(verdicts[n].score for n in good)
            shown.append(AnswerSentence(sentence, good, True, score, attributed, checks))
            supported.append(claim)
            continue
        # Several papers asked for: "The papers that do X or Y are [1] and [3]." names each of them.
        if restates and [n for n in names_ or cited if by_paper(n)]:
            continue
        # "X is 11.07, and Y works in Lean.": two answers, often from two papers, each checked alone.
        parts = tx.clauses(text) if whole else [text]
        if len(parts) > 1:
            queue.extendleft(reversed(prepared(parts, False)))
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
    close_heading()
    citations = renumber(shown, offered, passage)
    text = render_text(shown, citations)
    return Checked(text, shown, removed, citations, invented, supported)
