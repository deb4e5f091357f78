"""Is every shown sentence whole? (scored for every answer of a run: `whole_sentences`, `quotes_own_paper`)

A shown sentence is either a whole sentence of the model's draft, as the `clean` stage left it (a
marker used as a noun may have become its paper's title: title words count on either side), or a
quote: a whole sentence of an offered abstract in “…”. A fragment is a sentence of the draft with
words cut out ("Whose embeddings can be learned by a GNN ..." from "X, whose embeddings ..."). A
quote must be a sentence of the paper its marker cites: never another paper's sentence under a
citation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag import text as tx
from rag.answer.citations import strip_markers
from rag.answer.clean import clean_draft
from rag.types import Answer

_QUOTED = re.compile(r"“([^”]+)”")


def _norm(text: str) -> str:
    return " ".join(strip_markers(text).replace("“", "").replace("”", "").split()).rstrip(".").lower()


def _quotes(text: str, titles: Sequence[str]) -> list[str]:
    """The quoted spans of a sentence that are not a paper's title."""
    named = {_norm(t) for t in titles}
    return [q for q in _QUOTED.findall(text) if _norm(q) not in named]


def _evidence_sentences(answer: Answer) -> dict[str, set[str]]:
    return {ev.paper.id: {_norm(s.text) for s in ev.sentences} for ev in answer.evidence}


def _is_quote(text: str, titles: Sequence[str], sentences: set[str]) -> bool:
    spans = _quotes(text, titles)
    return bool(spans) and all(_norm(q) in sentences for q in spans)


def whole_sentences(answer: Answer) -> bool | None:
    """Every shown sentence is a whole draft sentence or a whole quoted abstract sentence (None:
    nothing shown)."""
    if answer.abstained or not answer.sentences:
        return None
    titles = [t for ev in answer.evidence for t in (ev.paper.title, ev.paper.display_title) if t]
    cleaned = clean_draft(answer.draft, titles)
    title_words = set().union(*(tx.content_words(t) for t in titles)) if titles else set()
    # Line by line, as the check stage reads a draft: a list's heading and items are apart.
    drafted = [
        tx.content_words(strip_markers(d)) for line in cleaned.splitlines() for d in tx.sentences(line)
    ]
    every = set().union(*_evidence_sentences(answer).values()) if answer.evidence else set()
    for s in answer.sentences:
        # A sentence the product writes itself (an answer by parts' "The abstract of ... does not
        # state this for X.") is neither a piece of the draft nor a quote.
        if not s.claim or _is_quote(s.text, titles, every):
            continue
        words = tx.content_words(strip_markers(s.text))
        if not any(d - title_words <= words | title_words and words - title_words <= d for d in drafted):
            return False
    return True


def quotes_own_paper(answer: Answer) -> bool | None:
    """Every quoted sentence is a sentence of the paper its marker cites (None: no quote shown)."""
    if answer.abstained:
        return None
    titles = [t for ev in answer.evidence for t in (ev.paper.title, ev.paper.display_title) if t]
    by_number = {c.number: c.paper_id for c in answer.citations}
    own = _evidence_sentences(answer)
    seen = False
    for s in answer.sentences:
        spans = _quotes(s.text, titles)
        every = set().union(*own.values()) if own else set()
        if not spans or not all(_norm(q) in every for q in spans):
            continue  # not a quote of an abstract sentence (the model's own words)
        seen = True
        cited = {by_number.get(n) for n in s.citations}
        if not any(_norm(q) in own.get(p or "", set()) for q in spans for p in cited):
            return False
    return True if seen else None


def parts_own_paper(answer: Answer) -> float:
    """1 when every answered part of an answer by parts cites its own paper and no other (no fact
    given to the wrong paper), else 0."""
    return float(all(set(p["cited"]) <= {p["paper_id"]} for p in answer.parts if p["answered"]))
