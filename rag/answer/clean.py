"""The clean stage's text handling: what in a draft is no claim and goes before checking."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rag import text as tx
from rag.answer.citations import attach_trailing_markers, name_noun_markers, strip_markers

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
