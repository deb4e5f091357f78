"""read -> dedupe -> chunk -> embed -> store, incrementally: only new or changed papers are
embedded, in batches streamed to the store so memory does not grow with the corpus."""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rag.index.chunking import OVERLAP_SENTENCES, chunk_text, chunk_vectors, embedding_text
from rag.index.embedding import Embedder
from rag.index.readers import ReadError, normalize_text, read_paths
from rag.index.sentence_vectors import SentenceVectors
from rag.index.store import Store, StoreError
from rag.text import sentence_spans
from rag.types import Paper

log = logging.getLogger(__name__)

Progress = Callable[[Iterable[Paper], int], Iterable[Paper]]


@dataclass
class IngestSummary:
    files_read: int = 0
    papers: int = 0
    duplicates_merged: int = 0
    papers_new: int = 0
    papers_changed: int = 0
    papers_unchanged: int = 0
    papers_removed: int = 0
    chunks_embedded: int = 0
    chunks_unchanged: int = 0
    sentence_papers: int = 0  # papers whose sentences were embedded for ranking and evidence
    seconds: float = 0.0
    embed_seconds: float = 0.0
    errors: list[ReadError] = field(default_factory=list)

    def lines(self) -> list[str]:
        nothing = " (nothing to embed: the index is up to date)" if not self.chunks_embedded else ""
        return [
            f"files read: {self.files_read}, papers: {self.papers}, duplicates merged: "
            f"{self.duplicates_merged}",
            f"papers new: {self.papers_new}, changed: {self.papers_changed}, unchanged: "
            f"{self.papers_unchanged}, removed: {self.papers_removed}",
            f"chunks embedded: {self.chunks_embedded}, unchanged: {self.chunks_unchanged}{nothing}",
            *([f"papers with sentences embedded: {self.sentence_papers}"] if self.sentence_papers else []),
            f"errors: {len(self.errors)}, seconds: {self.seconds:.1f}",
        ]


def dedupe(papers: list[Paper]) -> tuple[list[Paper], int]:
    """Merge papers with the same id or the same normalized abstract; the merged paper keeps
    every source and the first non-empty value of each field. Returns (unique, merged count)."""
    by_key: dict[str, Paper] = {}
    unique: list[Paper] = []
    merged = 0
    for paper in papers:
        keys = [f"id:{paper.id}", f"text:{normalize_text(paper.abstract)}"]
        known = next((by_key[k] for k in keys if k in by_key), None)
        if known is None:
            unique.append(paper)
            for k in keys:
                by_key[k] = paper
            continue
        merged += 1
        if known.id.startswith("h-") and not paper.id.startswith("h-"):
            known.id = paper.id
        known.sources += [s for s in paper.sources if s not in known.sources]
        for name in ("title", "url", "authors", "year", "venue"):
            if not getattr(known, name):
                setattr(known, name, getattr(paper, name))
        for k, v in paper.extra.items():
            known.extra.setdefault(k, v)
        for k in keys:
            by_key.setdefault(k, known)
    return unique, merged


def content_hash(paper: Paper) -> str:
    """Changes when anything but the paper's sources changes (sources are updated in place)."""
    record = [paper.abstract, paper.title, paper.url, paper.authors, paper.year, paper.venue, paper.extra]
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()


def _file_of(source: str) -> str:
    return source.rsplit("#", 1)[0]


@contextmanager
def ingest_lock(data_dir: Path) -> Iterator[None]:
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / "ingest.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise StoreError("Another ingest is running on this index; wait for it.") from exc
        yield


def ingest(
    paths: list[Path],
    store: Store,
    embedder: Embedder,
    *,
    chunk_tokens: int = 200,
    overlap_sentences: int = OVERLAP_SENTENCES,
    rebuild: bool = False,
    batch_papers: int = 64,
    progress: Progress | None = None,
    sentences: SentenceVectors | None = None,
) -> IngestSummary:
    """Index the papers under `paths`. A file read again defines what it now holds: papers it
    no longer yields lose that source, and are removed when no source is left. Each new or changed
    abstract's sentences are embedded once, kept in `sentences` (ranking and evidence read them;
    in memory when None), and its chunks' vectors derived from them."""
    started = time.perf_counter()
    report = read_paths(paths)
    papers, merged = dedupe(report.papers)
    summary = IngestSummary(
        files_read=len(report.files_read),
        papers=len(papers),
        duplicates_merged=merged,
        errors=report.errors,
    )
    target = store.begin_rebuild() if rebuild else None
    col = store.open_for_write(target)
    existing = {} if rebuild else store.paper_hashes(col)
    reread = set(report.files_read)

    todo: list[tuple[Paper, str]] = []
    for paper in papers:
        old_hash, old_sources = existing.get(paper.id, ("", []))
        # Keep sources from files not read this time (other folders, or files that failed).
        paper.sources = paper.sources + [
            s for s in old_sources if _file_of(s) not in reread and s not in paper.sources
        ]
        digest = content_hash(paper)
        if old_hash == digest:
            summary.papers_unchanged += 1
            if sorted(old_sources) != sorted(paper.sources):
                store.update_sources(col, paper.id, paper.sources)
        else:
            todo.append((paper, digest))
            if old_hash:
                summary.papers_changed += 1
            else:
                summary.papers_new += 1

    writer = _Writer(
        store, col, embedder, sentences or SentenceVectors(None, embedder.model_id),
        {p.id: d for p, d in todo}, {p.id for p, _ in todo if p.id in existing},
        chunk_tokens, overlap_sentences, summary,
    )  # fmt: skip
    to_embed = [p for p, _ in todo]
    iterator: Iterable[Paper] = progress(to_embed, len(to_embed)) if progress else to_embed
    pending: list[Paper] = []
    for paper in iterator:
        pending.append(paper)
        if len(pending) >= batch_papers:
            writer.write(pending)
            pending = []
    writer.write(pending)

    current = {p.id for p in papers}
    for pid, (_, old_sources) in existing.items():
        if pid in current:
            continue
        left = [s for s in old_sources if _file_of(s) not in reread]
        if not left:
            store.delete_paper(col, pid)
            summary.papers_removed += 1
        elif left != old_sources:
            store.update_sources(col, pid, left)

    store.close_write(col)
    if target:
        store.finish_rebuild(target)
    summary.chunks_unchanged = max(0, store.count() - summary.chunks_embedded)
    summary.seconds = time.perf_counter() - started
    return summary


@dataclass
class _Writer:
    """Embeds a batch of papers once and stores it: each abstract's sentences (kept for ranking and
    evidence), then each title, each call sorted by length inside the embedder; chunk vectors are
    derived from them."""

    store: Store
    col: object
    embedder: Embedder
    sentences: SentenceVectors
    digests: dict[str, str]
    replacing: set[str]
    chunk_tokens: int
    overlap: int
    summary: IngestSummary

    def write(self, papers: list[Paper]) -> None:
        if not papers:
            return
        spans = [sentence_spans(p.abstract) for p in papers]
        count = self._counter(papers, spans)
        t0 = time.perf_counter()
        before = self.sentences.embedded
        matrices = self.sentences.vectors(papers, self.embedder.embed_batch)
        titled = [p.title for p in papers if p.title]
        titles = iter(np.asarray(self.embedder.embed_batch(titled), dtype=np.float32) if titled else [])
        self.summary.embed_seconds += time.perf_counter() - t0
        self.summary.sentence_papers += self.sentences.embedded - before
        entries = []
        for paper, matrix, paper_spans in zip(papers, matrices, spans):
            reserve = count(paper.title) + 3 if paper.title else 0
            chunks = chunk_text(
                paper.id, paper.abstract, max_tokens=self.chunk_tokens,
                overlap_sentences=self.overlap, count_tokens=count, reserved_tokens=reserve,
            )  # fmt: skip
            title = next(titles) if paper.title else None
            vectors = chunk_vectors(chunks, paper_spans, matrix, title)
            docs = [embedding_text(paper.title, c) for c in chunks]
            entries.append((paper, self.digests[paper.id], chunks, vectors, docs))
            self.summary.chunks_embedded += len(chunks)
        self.store.add(self.col, entries, self.replacing)

    def _counter(self, papers: list[Paper], spans: list[list[tuple[int, int]]]):
        """Chunking counts every sentence's word pieces: counted here for the whole batch at once
        (in parallel where the tokenizer can), one at a time only for pieces of long sentences."""
        texts = [p.abstract[s:e] for p, ss in zip(papers, spans) for s, e in ss]
        texts += [p.title for p in papers if p.title]
        known = dict(zip(texts, self.embedder.count_tokens_many(texts)))

        def count(text: str) -> int:
            found = known.get(text)
            return found if found is not None else self.embedder.count_tokens(text)

        return count
