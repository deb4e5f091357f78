"""Papers like this one: the papers nearest a paper in meaning, each with its sentence that is
nearest the paper (what makes them near, in the paper's own words).

A paper is told by the mean of its sentences' vectors (the ones ingest keeps): candidates come
from the chunk vectors in Chroma, queried with that mean, and are then ordered by their own mean,
so a paper with one chunk close by chance does not outrank one that is near as a whole."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.index.embedding import Embedder
from rag.index.sentence_vectors import SentenceVectors
from rag.index.store import Store, StoreError
from rag.search.evidence import embedded_sentences
from rag.types import Paper

CANDIDATES_PER_RESULT = 4  # papers read for each one returned


@dataclass(frozen=True)
class Similar:
    paper: Paper
    similarity: float  # cosine of the two papers' mean sentence vectors
    sentence: str  # this paper's sentence nearest the other paper

    def to_json(self) -> dict[str, Any]:
        return {
            "paper_id": self.paper.id,
            "title": self.paper.title,
            "url": self.paper.url,
            "similarity": round(self.similarity, 4),
            "sentence": self.sentence,
        }


def _mean(vectors: list[np.ndarray]) -> np.ndarray | None:
    if not vectors:
        return None
    mean = np.mean(vectors, axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-12)


def similar(
    store: Store, embedder: Embedder, vectors: SentenceVectors | None, paper_id: str, k: int = 5
) -> tuple[Paper, list[Similar]]:
    """The paper `paper_id` and the `k` papers nearest it, nearest first."""
    found = store.papers([paper_id])
    if paper_id not in found:
        raise StoreError(f"No paper with id {paper_id!r} in the index (`citewise search` shows ids).")
    paper = found[paper_id]
    mine = _mean([s.vector for s in embedded_sentences([paper], embedder, vectors)[0]])
    if mine is None:
        return paper, []
    hits = store.collection.query(
        query_embeddings=[mine.tolist()],
        n_results=max(1, min(store.count(), k * CANDIDATES_PER_RESULT * 3)),
        include=["metadatas"],
    )
    ids = list(dict.fromkeys(m["paper_id"] for m in hits["metadatas"][0] if m and m["paper_id"] != paper_id))
    ids = ids[: k * CANDIDATES_PER_RESULT]
    papers = store.papers(ids)
    candidates = [papers[i] for i in ids if i in papers]
    out = []
    for other, sentences in zip(candidates, embedded_sentences(candidates, embedder, vectors)):
        theirs = _mean([s.vector for s in sentences])
        if theirs is None:
            continue
        nearest = max(sentences, key=lambda s: float(s.vector @ mine))
        out.append(Similar(other, float(theirs @ mine), nearest.text))
    out.sort(key=lambda s: -s.similarity)
    return paper, out[:k]


def named_paper(
    title: str, results: list, weight: Callable[[list[str]], dict[str, float]] | None = None
) -> Paper | None:
    """The paper of `results` (a search for `title`) whose title says most of the words said,
    each word weighed by `weight` (its rarity: "sinks" says more than "LLMs"), when it says at
    least half the weight: "Papers like LoRA" finds "LoRA: ...", and a title nobody wrote finds
    none rather than a wrong one."""
    from rag.text import keyword_terms

    said = set(keyword_terms(title))
    weights = (weight or (lambda terms: dict.fromkeys(terms, 1.0)))(sorted(said))
    total = sum(weights.values())
    if not said or total <= 0:
        return None

    def says(paper: Paper) -> float:
        return sum(weights[t] for t in said & set(keyword_terms(paper.title)))

    best = max(results, key=lambda r: says(r.paper), default=None)
    return best.paper if best is not None and says(best.paper) >= 0.5 * total else None


def similar_text(paper: Paper, found: list[Similar]) -> str:
    """The answer in words: the papers nearest `paper`, each with its sentence nearest it."""
    if not found:
        return f"No other indexed paper is near “{paper.display_title}”."
    lines = [
        f"The {len(found)} indexed papers nearest “{paper.display_title}” (by the mean of their sentences' vectors):"
    ]
    lines += [
        f"{i}. {s.paper.display_title} ({s.similarity:.2f}): “{s.sentence}”" for i, s in enumerate(found, 1)
    ]
    return "\n".join(lines)
