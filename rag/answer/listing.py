"""Survey answers on the answer side: the sentence that introduces the list of every fitting paper
(its count, the filters applied in a reader's words, a filter the index cannot apply, the phrases
searched in place of ones that found too little, and how many near-misses the judge cut)."""

from __future__ import annotations

from collections.abc import Sequence

from rag import filters as flt
from rag.question import Intent
from rag.question.said import shown_status
from rag.search.survey import SurveyHit


def unknown_filters(said: flt.Filters, store) -> list[str]:
    """The filter values a question states that no indexed paper has ("venue neurips 2024")."""
    facets = store.facets() if said else {}
    known = lambda k, v: any(v == f or (k == "area" and v in f) for f in facets.get(k, []))  # noqa: E731
    return [f"{k} {v}" for k, vs in said.items() for v in vs if not known(k, v)]


def _within(applied: flt.Filters) -> str:
    """ "status: rejected; area: learning theory" — statuses in a reader's words."""
    shown = {
        k: tuple(dict.fromkeys(shown_status(v) for v in vs)) if k == "status" else vs
        for k, vs in applied.items()
    }
    return f" ({flt.describe(shown)})" if shown else ""


def listing_sentence(
    intent: Intent,
    hits: list[SurveyHit],
    filters: flt.Filters | None = None,
    *,
    cut: int = 0,
    relaxed: Sequence[str] = (),
    unknown: Sequence[str] = (),
) -> str:
    """ "7 indexed papers (status: oral) are about “Kolmogorov-Arnold networks (KANs)”:" — the count
    answers a "How many papers ...?" question; the filters (the question's and `filters`) say what
    the list was kept within. `unknown`: filter values the index holds no paper with, said rather
    than ignored; `relaxed`: "phrase -> shorter phrase" searched instead; `cut`: near-misses the
    judge read as not about the topic."""
    within = _within(flt.combine(filters, intent.filters))
    notes = []
    if unknown:
        notes.append(f"No indexed paper has {' or '.join(unknown)}, so nothing can be listed for it.")
    if relaxed:
        notes.append("Too few papers use " + "; ".join(f"“{a}” as written (searched “{b}”)" for a, b in
                                                      (r.split(" -> ", 1) for r in relaxed)) + ".")  # fmt: skip
    if cut:
        notes.append(f"{cut} more paper{'' if cut == 1 else 's'} mention{'s' if cut == 1 else ''} it but "
                     f"{'is' if cut == 1 else 'are'} not about it (not listed; `citewise ask --near-misses` shows them).")  # fmt: skip
    n = len(hits)
    lead = " ".join(notes) + (" " if notes else "")
    if not n:
        return f"{lead}No indexed paper{within} is about “{intent.topic}”."
    return f"{lead}{n} indexed paper{'' if n == 1 else 's'}{within} {'is' if n == 1 else 'are'} about “{intent.topic}”:"
