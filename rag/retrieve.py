"""Hybrid retrieval on llama-index retriever classes: dense (Chroma) + BM25, fused by
reciprocal rank, then grouped per paper with the best chunk first."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from rag.embedding import Embedder
from rag.store import Store, stored_chunk
from rag.types import Passage, SearchResult

DENSE_SIM = "dense_similarity"


def _node(cid: str, doc: str, meta: dict, score: float, similarity: float | None) -> NodeWithScore:
    metadata = {**meta, DENSE_SIM: similarity}
    return NodeWithScore(node=TextNode(id_=cid, text=doc, metadata=metadata), score=score)


@dataclass
class DepthQuery(QueryBundle):
    """A query that carries its own candidate depth: retrievers are shared by concurrent
    searches, so the depth travels with the call instead of living on the retriever."""

    top_k: int = 20


def _depth(query_bundle: QueryBundle, default: int) -> int:
    return getattr(query_bundle, "top_k", default)


class DenseRetriever(BaseRetriever):
    """Nearest chunks by cosine similarity in Chroma, queried with our own query embedding
    (Chroma's `query_texts` would fall back to its downloading default embedder)."""

    def __init__(self, store: Store, embedder: Embedder, top_k: int = 20):
        super().__init__()
        self.store, self.embedder, self.top_k = store, embedder, top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        embedding = query_bundle.embedding or self.embedder.embed(query_bundle.query_str)
        query_bundle.embedding = embedding
        col_hits = self.store.collection.query(
            query_embeddings=[embedding],
            n_results=max(1, min(_depth(query_bundle, self.top_k), self.store.count())),
            include=["metadatas", "documents", "distances"],
        )
        ids, metas = col_hits["ids"][0], col_hits["metadatas"][0]
        docs, dists = col_hits["documents"][0], col_hits["distances"][0]
        return [
            _node(cid, doc, meta, 1.0 - dist, 1.0 - dist)
            for cid, meta, doc, dist in zip(ids, metas, docs, dists)
        ]


class KeywordRetriever(BaseRetriever):
    """BM25 over the same chunks (rebuilt from Chroma when out of date)."""

    def __init__(self, store: Store, top_k: int = 20):
        super().__init__()
        self.store, self.top_k = store, top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.store.keyword_index().search(query_bundle.query_str, _depth(query_bundle, self.top_k))
        return [_node(cid, doc, meta, score, None) for cid, doc, meta, score in hits]


def rrf(rankings: Sequence[Sequence[NodeWithScore]], k: int = 60) -> list[NodeWithScore]:
    """Reciprocal rank fusion: score = sum of 1/(k + rank) over the rankings a chunk is in.
    Keeps the dense similarity of a chunk when any ranking knows it."""
    scores: dict[str, float] = defaultdict(float)
    nodes: dict[str, NodeWithScore] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, 1):
            cid = hit.node.node_id
            scores[cid] += 1.0 / (k + rank)
            known = nodes.get(cid)
            if known is None or known.node.metadata.get(DENSE_SIM) is None:
                nodes[cid] = hit
    fused = sorted(scores, key=lambda c: scores[c], reverse=True)
    return [NodeWithScore(node=nodes[c].node, score=scores[c]) for c in fused]


class HybridRetriever(BaseRetriever):
    """Dense + keyword, fused with RRF (or one of them alone, for comparison)."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        top_k: int = 20,
        mode: str = "rrf",
        rrf_k: int = 60,
    ):
        super().__init__()
        self.dense = DenseRetriever(store, embedder, top_k)
        self.keyword = KeywordRetriever(store, top_k)
        self.mode, self.rrf_k = mode, rrf_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.mode == "dense":
            return self.dense.retrieve(query_bundle)
        if self.mode == "bm25":
            return self.keyword.retrieve(query_bundle)
        dense = self.dense.retrieve(query_bundle)
        return rrf([dense, self.keyword.retrieve(query_bundle)], self.rrf_k)


def group_by_paper(hits: Sequence[NodeWithScore], store: Store, k: int) -> list[SearchResult]:
    """The best `k` papers, each scored by its best chunk, with its chunks best first."""
    by_paper: dict[str, list[Passage]] = {}
    order: list[str] = []
    for hit in hits:
        meta = hit.node.metadata
        pid = meta["paper_id"]
        if pid not in by_paper:
            if len(order) == k:
                continue
            by_paper[pid] = []
            order.append(pid)
        chunk = stored_chunk(meta, hit.node.get_content()).chunk
        by_paper[pid].append(Passage(chunk, None, float(hit.score or 0), meta.get(DENSE_SIM)))  # type: ignore[arg-type]
    papers = store.papers(order)
    results = []
    for pid in order:
        if pid not in papers:  # deleted between the query and now
            continue
        for passage in by_paper[pid]:
            passage.paper = papers[pid]
        results.append(SearchResult(len(results) + 1, papers[pid], by_paper[pid][0].score, by_paper[pid]))
    return results


def search(
    query: str,
    store: Store,
    embedder: Embedder,
    *,
    k: int = 5,
    mode: str = "rrf",
    rrf_k: int = 60,
    candidate_multiplier: int = 4,
    retriever: HybridRetriever | None = None,
    query_vector: list[float] | None = None,
) -> list[SearchResult]:
    """Search the index: the top `k` papers for `query`."""
    if not query.strip():
        raise ValueError("The query is empty.")
    retriever = retriever or HybridRetriever(store, embedder, mode=mode, rrf_k=rrf_k)
    bundle = DepthQuery(query, embedding=query_vector, top_k=max(k * candidate_multiplier, 10))
    return group_by_paper(retriever.retrieve(bundle), store, k)
