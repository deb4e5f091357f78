"""Survey answers on the answer side: the sentence that introduces the list of every fitting paper
(its count, and the filters applied)."""

from __future__ import annotations

from rag import filters as flt
from rag.questions import Intent
from rag.search.survey import SurveyHit


def listing_sentence(intent: Intent, hits: list[SurveyHit], filters: flt.Filters | None = None) -> str:
    """ "7 indexed papers (status: oral) are about “Kolmogorov-Arnold networks (KANs)”:" — the count
    answers a "How many papers ...?" question; the filters (the question's and `filters`) say what
    the list was kept within."""
    applied = flt.combine(filters, intent.filters)
    within = f" ({flt.describe(applied)})" if applied else ""
    n = len(hits)
    papers = f"{n} indexed paper{'' if n == 1 else 's'}{within}"
    if not n:
        return f"No indexed paper{within} is about “{intent.topic}”."
    return f"{papers} {'is' if n == 1 else 'are'} about “{intent.topic}”:"
