"""A whole draft checked: cleaned, split into sentences, each sentence checked against the sources
it cites (or moved to one that passes), failures removed and kept with their reasons."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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
from rag.trust.checks import has_claim
from rag.trust.rules import Trust
from rag.types import AnswerSentence, Check, Citation

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


def check_answer(
    draft: str, evidence: Sequence[Evidence], embedder, trust: Trust, question: str = ""
) -> Checked:
    """Check every sentence of `draft` against the sources it cites. A sentence whose cited
    source fails a check is given to another offered source that passes all of them (small
    models misplace markers), else removed and listed with its failed checks.

    Asked for a paper, a sentence that names one by its title ("“BirdSet: ...” introduces a
    benchmark for classifying bird sounds") says that paper is what the question describes, in
    the question's words: those words count as covered, and the similarity check decides whether
    the paper is about what the question asks."""
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
    asked = frozenset(tx.content_words(question)) if tx.asks_for_paper(question) else frozenset()
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
        given = asked if names_ else frozenset()
        verdicts = {n: trust.verify(claim, vec, ev, given=given) for n, ev in candidates.items()}
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
    text = render_text(shown, citations)
    return Checked(text, shown, removed, citations, invented, supported)
