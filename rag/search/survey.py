"""Survey answers: every indexed paper that fits a "which papers ...?" question, not the few the
model reads. The question's topic ("Kolmogorov-Arnold networks (KANs)") becomes phrases of stemmed
terms; a paper fits when a chunk of it holds one of them in a row, within the question's filters.
Each paper is listed with the sentence of its abstract that shows it fits.

How a topic becomes phrases, each step measured on the survey dev split:
- "X (Y)": X is the phrase; the acronym Y counts only in a chunk that also holds a word of X
  ("SAM" is also the Segment Anything Model).
- "A B or C": "A B" and "A C" ("backdoor attacks or defences").
- A word the whole index uses everywhere ("model", "learning", "data") at an end of a phrase
  goes, one at each end at most: "equivariant models" is "equivariant", "protein language
  models" is "protein language".
- A phrase that finds fewer than `RELAX_BELOW` papers loses its last word ("Koopman operator
  theory" -> "Koopman operator"), as long as a rare word stays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag import filters as flt
from rag import text as tx
from rag.index.store import Store
from rag.questions import Intent
from rag.types import Paper

# A word in more than this share of the chunks says nothing about a topic ("model": 69 %).
UBIQUITOUS = 0.25
# A word in fewer than this share of the chunks is rare enough to carry a topic alone.
RARE = 0.01
RELAX_BELOW = 10
# An acronym counts in a chunk that also holds a word of the long form this rare.
ACRONYM_CONTEXT = 0.05
MAX_CHUNKS = 5000


@dataclass
class SurveyHit:
    """One paper that fits a survey question, with the sentence of its abstract that shows it."""

    rank: int
    paper: Paper
    sentence: str

    def to_json(self) -> dict:
        p = self.paper
        return {"rank": self.rank, "paper_id": p.id, "title": p.display_title, "url": p.url,
                "status": p.status, "area": p.extra.get("primary_area", ""), "sentence": self.sentence}  # fmt: skip


def phrases(topic: str) -> tuple[list[str], list[str]]:
    """(the topic's phrases as written, its acronyms in parentheses)."""
    acronyms = [a.strip() for a in re.findall(r"\(([^)]*)\)", topic) if a.strip()]
    long = re.sub(r"\s*\([^)]*\)", "", topic).strip()
    parts = [p for p in re.split(r"\s+(?:or|and)\s+|,\s*", long) if p.strip()]
    if len(parts) == 2 and len(parts[1].split()) == 1 and len(parts[0].split()) > 1:
        parts = [parts[0], " ".join([*parts[0].split()[:-1], parts[1]])]  # "A B or C": "A B", "A C"
    return (parts or acronyms), (acronyms if parts else [])


class Survey:
    """The papers of an index that fit a survey question (`find`)."""

    def __init__(self, store: Store):
        self.store = store
        self.keyword = store.keyword_index()

    def _units(self, phrase: str, df: dict[str, int]) -> list[list[str]]:
        """The phrase's words as stems (a hyphenated word is one unit), ubiquitous ends dropped."""
        units = [u for u in (tx.keyword_terms(w) for w in phrase.split()) if u]
        units = [[t for t in u if df.get(t)] for u in units]
        units = [u for u in units if u]
        n = self.keyword.size or 1

        def ubiquitous(u: list[str]) -> bool:
            return all(df[t] > UBIQUITOUS * n for t in u)

        # One head noun at each end at most: "protein language models" keeps "language".
        if len(units) > 1 and ubiquitous(units[-1]):
            units.pop()
        if len(units) > 1 and ubiquitous(units[0]):
            units.pop(0)
        return units

    def _chunks(self, phrase: str, filters: flt.Filters) -> set[str]:
        terms = list(dict.fromkeys(tx.keyword_terms(phrase)))
        df = self.keyword.frequencies(terms)
        units = self._units(phrase, df)
        n = self.keyword.size or 1
        found = set(self.keyword.chunks_with_phrase([t for u in units for t in u], MAX_CHUNKS, filters))
        while len(units) > 1 and len({c.split("::")[0] for c in found}) < RELAX_BELOW:
            if not any(df[t] < RARE * n for u in units[:-1] for t in u):
                break
            units.pop()
            found = set(self.keyword.chunks_with_phrase([t for u in units for t in u], MAX_CHUNKS, filters))
        return found

    def _acronym_chunks(self, acronym: str, words: set[str], filters: flt.Filters) -> set[str]:
        ids = self.keyword.name_chunks(tx.name_forms(acronym), MAX_CHUNKS, filters)
        docs = self.store.chunks(ids)
        return {cid for cid, (doc, _) in docs.items() if words & set(tx.keyword_terms(doc))}

    def find(self, intent: Intent, filters: flt.Filters | None = None) -> list[SurveyHit]:
        """Every paper fitting `intent` within `filters` and the filters the question states,
        ranked: papers whose title holds the topic first, then by how many of their chunks do."""
        if not intent.topic:
            return []
        stored = self.store.resolve(flt.combine(filters, intent.filters))
        long, acronyms = phrases(intent.topic)
        chunks: set[str] = set()
        for phrase in long:
            chunks |= self._chunks(phrase, stored)
        terms = list({t for p in long for t in tx.keyword_terms(p)})
        n = self.keyword.size or 1
        words = {
            t for t, d in self.keyword.frequencies(terms).items() if 0 < d <= max(ACRONYM_CONTEXT * n, 2)
        }
        for acronym in acronyms:
            chunks |= self._acronym_chunks(acronym, words, stored)
        counts: dict[str, int] = {}
        for cid in chunks:
            pid = cid.split("::")[0]
            counts[pid] = counts.get(pid, 0) + 1
        papers = list(self.store.papers(list(counts)).values())
        stems = [tx.keyword_terms(p) for p in long]
        ranked = sorted(papers, key=lambda p: (-_in_title(p, stems), -counts[p.id], p.display_title))
        return [SurveyHit(i, p, _showing(p, stems)) for i, p in enumerate(ranked, 1)]


def _in_title(paper: Paper, stems: list[list[str]]) -> bool:
    title = " ".join(tx.keyword_terms(paper.title))
    return any(" ".join(s) in title for s in stems if s)


def _showing(paper: Paper, stems: list[list[str]]) -> str:
    """The abstract's sentence that shows the paper fits: the one holding most of the topic's
    stems, the earliest of those."""
    wanted = {t for s in stems for t in s}
    sentences = tx.sentences(paper.abstract) or [paper.abstract]
    return tx.plain(max(sentences, key=lambda s: len(wanted & set(tx.keyword_terms(s)))))
