"""Every abstract's sentences embedded once, kept on disk beside the index.

Ranking and evidence read a paper sentence by sentence (`retrieve.rerank_by_sentences`,
`evidence.select_evidence`). Embedding sentences at question time costs ~9 ms each on 2 cores:
2.7 s for the 40 papers a question's ranking reads. So ingest embeds them once and this file keeps
them, keyed by the embedder and the abstract's text: a changed abstract gets new vectors, and a
paper the file lacks (an index built before it existed, a read-only folder) is embedded when
asked. Vectors are stored as float16, 768 bytes a sentence."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag.text import sentence_spans
from rag.types import Paper

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], list[list[float]]]
_TABLE = "CREATE TABLE IF NOT EXISTS vectors(key TEXT PRIMARY KEY, spans TEXT NOT NULL, vec BLOB NOT NULL)"


class SentenceVectors:
    """The sentence vectors of abstracts, by (embedder, abstract); in memory only when `path` is
    None or cannot be written."""

    def __init__(self, path: Path | None, model_id: str):
        self.model_id = model_id
        self._lock = threading.RLock()
        self._memory: dict[str, tuple[list, np.ndarray]] = {}
        self._con: sqlite3.Connection | None = None
        self.embedded = 0  # papers embedded since opened (the rest were read back)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                con = sqlite3.connect(path, timeout=600, isolation_level=None, check_same_thread=False)
                con.execute("PRAGMA journal_mode=WAL")
                con.execute(_TABLE)
                self._con = con
            except (OSError, sqlite3.Error) as exc:  # a read-only data folder: vectors stay in memory
                log.info("sentence vectors not kept on disk (%s): %s", path, exc)

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def key(self, paper: Paper) -> str:
        return hashlib.sha1(f"{self.model_id}\0{paper.abstract}".encode()).hexdigest()

    def vectors(self, papers: Sequence[Paper], embed: Embed) -> list[np.ndarray]:
        """One matrix per paper, a row per sentence of `sentence_spans(paper.abstract)`; the papers
        not kept yet are embedded in one batch and kept."""
        spans = [sentence_spans(p.abstract) for p in papers]
        keys = [self.key(p) for p in papers]
        found = self._read(keys)
        out: list[np.ndarray | None] = []
        for key, ss in zip(keys, spans):
            got = found.get(key)
            out.append(got[1] if got is not None and got[0] == [list(s) for s in ss] else None)
        missing = [i for i, m in enumerate(out) if m is None]
        for i, matrix in zip(
            missing, self._embed([papers[i] for i in missing], [keys[i] for i in missing], embed)
        ):
            out[i] = matrix
        return [m for m in out if m is not None]

    def _embed(self, papers: Sequence[Paper], keys: list[str], embed: Embed) -> list[np.ndarray]:
        """The papers' sentence matrices, embedded in one batch and kept."""
        if not papers:
            return []
        self.embedded += len(papers)
        spans = [sentence_spans(p.abstract) for p in papers]
        texts = [p.abstract[s:e] for p, ss in zip(papers, spans) for s, e in ss]
        flat = iter(np.asarray(embed(texts), dtype=np.float32) if texts else [])
        out, rows = [], []
        for key, ss in zip(keys, spans):
            matrix = np.stack([next(flat) for _ in ss]) if ss else np.zeros((0, 0), np.float32)
            # As read back later: a paper ranks the same whether its vectors were kept or not.
            matrix = matrix.astype(np.float16).astype(np.float32)
            out.append(matrix)
            rows.append((key, [list(s) for s in ss], matrix))
        self._write(rows)
        return out

    def _read(self, keys: list[str]) -> dict[str, tuple[list, np.ndarray]]:
        with self._lock:
            if self._con is None:
                return {k: self._memory[k] for k in keys if k in self._memory}
            out = {}
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                sql = f"SELECT key, spans, vec FROM vectors WHERE key IN ({','.join('?' * len(part))})"
                for key, spans, blob in self._con.execute(sql, part):
                    rows = json.loads(spans)
                    flat = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
                    matrix = flat.reshape(len(rows), -1) if rows else np.zeros((0, 0), np.float32)
                    out[key] = (rows, matrix)
            return out

    def _write(self, rows: list[tuple[str, list, np.ndarray]]) -> None:
        with self._lock:
            if self._con is None:
                self._memory.update({k: (s, m) for k, s, m in rows})
                return
            try:
                # One transaction per batch: in autocommit mode each row was its own commit.
                with self._con:
                    self._con.execute("BEGIN")
                    self._con.executemany(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                        [(k, json.dumps(s), m.astype(np.float16).tobytes()) for k, s, m in rows],
                    )
            except sqlite3.Error as exc:  # read-only or full disk: the answer goes on without keeping them
                log.info("sentence vectors not kept: %s", exc)


def sentence_vectors_from_settings(settings, embedder) -> SentenceVectors:
    """The file beside the settings' index (`<data_dir>/sentences/vectors.sqlite`)."""
    return SentenceVectors(settings.data_dir / "sentences" / "vectors.sqlite", embedder.model_id)
