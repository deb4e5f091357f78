"""Hybrid retrieval on llama-index retriever classes: dense (Chroma) + BM25 + the rare names of
the query, fused by reciprocal rank, then grouped per paper with the best chunk first."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from rag import filters as flt
from rag import text as tx
from rag.index.embedding import Embedder
from rag.index.records import chunk_id, stored_chunk
from rag.index.store import Store
from rag.search.evidence import Sentence, fit, paper_score
from rag.types import Paper, Passage, SearchResult

if TYPE_CHECKING:
    from rag.question import Intent

SentencesOf = Callable[[list[Paper]], list[list[Sentence]]]

DENSE_SIM = "dense_similarity"


def _node(cid: str, doc: str, meta: dict, score: float, similarity: float | None) -> NodeWithScore:
    metadata = {**meta, DENSE_SIM: similarity}
    return NodeWithScore(node=TextNode(id_=cid, text=doc, metadata=metadata), score=score)


@dataclass
class DepthQuery(QueryBundle):
    """A query that carries its own candidate depth: retrievers are shared by concurrent
    searches, so the depth travels with the call instead of living on the retriever."""

    top_k: int = 20
    filters: flt.Filters | None = None


def _depth(query_bundle: QueryBundle, default: int) -> int:
    return getattr(query_bundle, "top_k", default)


def _filters(query_bundle: QueryBundle) -> flt.Filters | None:
    return getattr(query_bundle, "filters", None)


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
            where=flt.chroma_where(_filters(query_bundle)),
            include=["metadatas", "documents", "distances"],
        )
        ids, metas = col_hits["ids"][0], col_hits["metadatas"][0]
        docs, dists = col_hits["documents"][0], col_hits["distances"][0]
        # A write stopped mid-way can leave a vector whose record is gone: it is no result.
        return [
            _node(cid, doc, meta, 1.0 - dist, 1.0 - dist)
            for cid, meta, doc, dist in zip(ids, metas, docs, dists)
            if meta is not None and doc is not None
        ]


class KeywordRetriever(BaseRetriever):
    """BM25 over the same chunks (rag/index/keyword.py), their text and metadata read from Chroma."""

    def __init__(self, store: Store, top_k: int = 20):
        super().__init__()
        self.store, self.top_k = store, top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.store.keyword_index().search(
            query_bundle.query_str, _depth(query_bundle, self.top_k), _filters(query_bundle)
        )
        chunks = self.store.chunks([cid for cid, _ in hits])
        return [_node(cid, *chunks[cid], score, None) for cid, score in hits if cid in chunks]


MAX_NAME_CHUNKS = 40  # a name in more chunks than this is common ("LLM", "ImageNet"): it pulls nothing


def rare_names(names: Iterable[str], store: Store, max_chunks: int = MAX_NAME_CHUNKS) -> list[str]:
    """The `names` (methods, models, datasets: "SemiCLIP", "Time-MoE") that occur in the whole
    index in at least one and at most `max_chunks` chunks (counted by id: nothing else fetched)."""
    return [n for n in sorted(names) if 0 < store.count_containing(n, max_chunks + 1) <= max_chunks]


def name_hits(
    query: str, store: Store, max_chunks: int = MAX_NAME_CHUNKS, filters: flt.Filters | None = None
) -> dict[str, tuple]:
    """Each rare name of the query with the chunks that contain it within the filters
    (`Store.containing`)."""
    out = {}
    for name in rare_names(tx.names(query), store, max_chunks):
        hits = store.containing(name, max_chunks, filters)
        if hits[0]:
            out[name] = hits
    return out


def on_subject(intent: Intent, results: list[SearchResult], store: Store) -> list[SearchResult]:
    """The results that mention a rare name of the question, when any does: a paper that never
    names the method asked about is no source for a claim about it. Unchanged when the question
    names nothing rare or no result mentions it. Asked "Which papers X with an LLM or Y?", each
    alternative is another paper's subject: only a name every alternative gives is required."""
    names = rare_names(intent.names, store)
    for alternative in intent.alternatives:
        names = [n for n in names if tx.name_in(n, alternative)]
    if not names:
        return results
    kept = [r for r in results if any(tx.name_in(n, r.paper.text) for n in names)]
    if not kept or len(kept) == len(results):
        return results
    return [replace(r, rank=i) for i, r in enumerate(kept, 1)]


def on_paper(intent: Intent, results: list[SearchResult], paper: Paper, store: Store) -> list[SearchResult]:
    """Only `paper`, the one a follow-up is about ("Which models did they test?"): what "they" did
    is in their paper, and a similar paper beside it lends the answer its names and numbers.
    Unchanged when the question names something rare the paper does not contain, or the search
    missed the paper."""
    if any(not tx.name_in(n, paper.text) for n in rare_names(intent.names, store)):
        return results
    kept = [r for r in results if r.paper.id == paper.id]
    return [replace(kept[0], rank=1)] if kept else results


class NameRetriever(BaseRetriever):
    """Chunks that contain a rare name of the query, those holding more of the names first, then
    by cosine similarity to the query. Among thousands of papers on one topic, the paper that
    names the method asked about is the one to read; dense and BM25 scores alone can bury it."""

    def __init__(self, store: Store, embedder: Embedder, max_chunks: int = MAX_NAME_CHUNKS):
        super().__init__()
        self.store, self.embedder, self.max_chunks = store, embedder, max_chunks

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found: dict[str, tuple[dict, str, list[float]]] = {}
        matched: dict[str, int] = defaultdict(int)
        hits = name_hits(query_bundle.query_str, self.store, self.max_chunks, _filters(query_bundle))
        for ids, metas, docs, vectors in hits.values():
            for cid, meta, doc, vec in zip(ids, metas, docs, vectors or [None] * len(ids)):
                found[cid] = (meta, doc, vec)
                matched[cid] += 1
        if not found:
            return []
        query = query_bundle.embedding or self.embedder.embed(query_bundle.query_str)
        query_bundle.embedding = query

        def cosine(vec) -> float:
            return sum(a * b for a, b in zip(query, vec)) if vec is not None else 0.0

        ranked = sorted(found, key=lambda c: (-matched[c], -cosine(found[c][2])))
        ranked = ranked[: _depth(query_bundle, 20)]
        return [_node(c, found[c][1], found[c][0], float(matched[c]), cosine(found[c][2])) for c in ranked]


def rrf(
    rankings: Sequence[Sequence[NodeWithScore]], k: int = 60, weights: Sequence[float] | None = None
) -> list[NodeWithScore]:
    """Reciprocal rank fusion: score = sum of weight/(k + rank) over the rankings a chunk is in.
    Keeps the dense similarity of a chunk when any ranking knows it."""
    scores: dict[str, float] = defaultdict(float)
    nodes: dict[str, NodeWithScore] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings)):
        for rank, hit in enumerate(ranking, 1):
            cid = hit.node.node_id
            scores[cid] += weight / (k + rank)
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
        name_weight: float = 1.0,
    ):
        super().__init__()
        self.dense = DenseRetriever(store, embedder, top_k)
        self.keyword = KeywordRetriever(store, top_k)
        self.names = NameRetriever(store, embedder)
        self.mode, self.rrf_k, self.name_weight = mode, rrf_k, name_weight

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.mode == "dense":
            return self.dense.retrieve(query_bundle)
        if self.mode == "bm25":
            return self.keyword.retrieve(query_bundle)
        rankings = [self.dense.retrieve(query_bundle), self.keyword.retrieve(query_bundle)]
        if self.name_weight > 0:
            rankings.append(self.names.retrieve(query_bundle))
        return rrf(rankings, self.rrf_k, [1.0, 1.0, self.name_weight])


def group_by_paper(hits: Sequence[NodeWithScore], store: Store, k: int) -> list[SearchResult]:
    """The best `k` papers, each scored by its best chunk, with its chunks best first."""
    by_paper: dict[str, list[Passage]] = {}
    order: list[str] = []
    hashes: dict[str, str] = {}
    for hit in hits:
        meta = hit.node.metadata
        pid = meta["paper_id"]
        if pid not in by_paper:
            if len(order) == k:
                continue
            by_paper[pid] = []
            order.append(pid)
            hashes[pid] = meta["paper_hash"]
        chunk = stored_chunk(meta, hit.node.get_content()).chunk
        by_paper[pid].append(Passage(chunk, None, float(hit.score or 0), meta.get(DENSE_SIM)))  # type: ignore[arg-type]
    papers = store.papers_at({pid: chunk_id(pid, hashes[pid], 0) for pid in order})
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
    candidate_multiplier: int = 4,
    retriever: HybridRetriever | None = None,
    query_vector: list[float] | None = None,
    filters: flt.Filters | None = None,
    rerank_papers: int = 0,
    sentences_of: SentencesOf | None = None,
    alternatives: Sequence[str] = (),
) -> list[SearchResult]:
    """Search the index: the top `k` papers for `query` (within `filters`, when given). With
    `sentences_of`, the first `rerank_papers` papers of the fused ranking are ordered again by
    their best sentences (`rerank_by_sentences`). Each of the question's `alternatives` ("Which
    papers do X or Y" asked for X and for Y) is searched too, its best papers ranked beside the
    whole question's."""
    if not query.strip():
        raise ValueError("The query is empty.")
    store.require_filters(filters)
    retriever = retriever or HybridRetriever(store, embedder, mode=mode)
    reranked = sentences_of is not None and rerank_papers > 0
    papers = max(k, rerank_papers) if reranked else k
    depth = max(papers * candidate_multiplier, 10)

    def ranked(text: str, vector: list[float] | None) -> list[SearchResult]:
        bundle = DepthQuery(text, embedding=vector, top_k=depth, filters=filters or None)
        results = group_by_paper(retriever.retrieve(bundle), store, papers)
        if reranked and results:
            vector = bundle.embedding or embedder.embed(text)
            names = rare_names(tx.names(text), store)
            results = rerank_by_sentences(text, vector, results, sentences_of, names)  # type: ignore[arg-type]
        return results[:k]

    results = ranked(query, query_vector)
    if not alternatives:
        return results
    return fuse_papers([results] + [ranked(alt, None) for alt in alternatives], k)


def rerank_by_sentences(
    query: str,
    query_vector: Sequence[float],
    results: list[SearchResult],
    sentences_of: SentencesOf,
    names: Sequence[str] = (),
) -> list[SearchResult]:
    """`results` ordered by the fit to the query (`evidence.fit`: cosine + word overlap) of each
    paper's best sentences (`evidence.paper_score`); a paper whose title the query gives first, then
    papers that contain more of the query's rare `names` (the paper that names the method asked
    about is the one to read). Sentences are the abstract's: without the title, a query that is a
    title would rank the papers whose sentences echo its words above the paper itself."""
    qv = np.asarray(query_vector, dtype=np.float32)
    words = tx.content_words(query)
    scored = []
    for result, sentences in zip(results, sentences_of([r.paper for r in results])):
        fits = [fit(qv, words, s) for s in sentences]
        named = sum(tx.name_in(n, result.paper.text) for n in names)
        titled = tx.gives_title(words, result.paper.title)
        scored.append((-titled, -named, -paper_score(fits), result.rank, result))
    scored.sort(key=lambda t: t[:4])
    return [replace(r, rank=i) for i, (*_, r) in enumerate(scored, 1)]


def fuse_papers(rankings: Sequence[Sequence[SearchResult]], k: int) -> list[SearchResult]:
    """Paper rankings interleaved, the first ranking's paper first at every depth: its top paper
    stays on top, and each other ranking's best follows right after."""
    seen: dict[str, SearchResult] = {}
    for depth in range(max(map(len, rankings), default=0)):
        for ranking in rankings:
            if depth < len(ranking):
                seen.setdefault(ranking[depth].paper.id, ranking[depth])
    return [replace(r, rank=i) for i, r in enumerate(list(seen.values())[:k], 1)]


def each_subject(found: Sequence[list[SearchResult]], wanted: int) -> list[SearchResult]:
    """For "How do A and B each ...?", from each part's search results: the best paper of each part
    first, in the parts' order, then the other results of each part in turn. One search for both
    finds the paper that says more of the shared words, and the model then answers for it only."""
    merged: list[SearchResult] = []
    for rank in range(wanted):
        for results in found:
            taken = {m.paper.id for m in merged}
            fresh = [r for r in results[rank:] if r.paper.id not in taken]
            if fresh:
                merged.append(fresh[0])
    return [replace(r, rank=i) for i, r in enumerate(merged[:wanted], 1)]
