"""Chroma (on disk or a server) holds chunks, vectors and paper records; the keyword index
(rag/index/keyword.py) is derived from it and brought in step whenever Chroma's generation stamp or
count differs from the one it recorded.

Writes are ordered so that a kill at any moment leaves a usable index: new chunks are added
before stale ones are deleted, the generation is marked dirty during writes (so the keyword index
follows again afterwards), and `--rebuild` fills a side collection that replaces the old one only
when complete.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rag import filters as flt
from rag import text as tx
from rag.index.chroma import StaleIndexError, StoreError, open_client, uninterrupted
from rag.index.chunking import CHUNK_VECTORS, OVERLAP_SENTENCES
from rag.index.records import chunk_id, chunk_meta, paper_from_meta
from rag.types import Chunk, Paper

log = logging.getLogger(__name__)

# 2: every chunk carries the filter fields (rag/filters.py). A version-1 index is searched as it is
# and gets the fields in place, without re-embedding, at the next `citewise ingest`.
SCHEMA_VERSION = 3  # 2: venue, year and status on every chunk; 3: the area too
MIGRATABLE = {1, 2}
PAGE = 2000
HANDLE_TTL = 2.0  # seconds a collection handle is reused before it is fetched again


class Store:
    """One Chroma collection plus its keyword index. `fingerprint` (embedder and chunking
    settings) is stamped on the collection so vectors from different settings never mix."""

    def __init__(
        self,
        chroma_dir: Path,
        *,
        collection: str = "citewise",
        chroma_url: str | None = None,
        keyword_dir: Path | None = None,
        fingerprint: dict[str, Any] | None = None,
    ):
        self.chroma_dir = Path(chroma_dir)
        self.chroma_url = chroma_url
        self.name = collection
        self.fingerprint = {"schema": SCHEMA_VERSION, **(fingerprint or {})}
        self.keyword_dir = Path(keyword_dir or self.chroma_dir.parent / "keyword") / collection
        self.client = open_client(self.chroma_dir, chroma_url)
        self._keyword = None
        self._keyword_stamp: str | None = None
        self._counted: tuple[str, int] = ("", 0)
        self._lock = threading.Lock()
        # The collection handle, fetched again only after a write here or when it is older than
        # HANDLE_TTL (another process may have written): a search used to fetch it five times.
        self._handle = None
        self._handle_at = 0.0
        self._checked_generation: str | None = None
        self._before_write, self._wrote = "", False  # the generation an ingest started from; did it write

    # ---- collections ------------------------------------------------------------------
    def _get(self, name: str | None = None, create: bool = False):
        name = name or self.name
        try:
            if create:
                return self.client.get_or_create_collection(
                    name,
                    metadata={"hnsw:space": "cosine", **self.fingerprint, "generation": "new"},
                    embedding_function=None,
                )
            return self.client.get_collection(name, embedding_function=None)
        except Exception as exc:
            if not create and "does not exist" in str(exc).lower():
                return None
            raise StoreError(f"Chroma collection '{name}' is unusable: {exc}") from exc

    def _current(self):
        """The cached collection handle (None when there is no collection)."""
        now = time.monotonic()
        if self._handle is None or now - self._handle_at > HANDLE_TTL:
            self._handle, self._handle_at = self._get(), now
        return self._handle

    def _invalidate(self) -> None:
        self._handle, self._checked_generation = None, None

    @property
    def collection(self):
        col = self._current()
        if col is None:
            raise StoreError("The index is empty: run `citewise ingest` first.")
        return col

    def exists(self) -> bool:
        return self._current() is not None

    def check_fingerprint(self, col=None) -> None:
        """Refuse an index built with other settings; checked once per generation."""
        cached = col is None
        col = col if col is not None else self._current()
        if col is None:
            return
        meta = col.metadata or {}
        if cached and meta.get("generation") == self._checked_generation:
            return
        diff = {k: (meta.get(k), v) for k, v in self.fingerprint.items() if meta.get(k) != v}
        if set(diff) == {"schema"} and meta.get("schema") in MIGRATABLE:
            diff = {}  # readable as it is; `open_for_write` brings it up to date
        if diff:
            detail = ", ".join(f"{k}: index has {a!r}, settings say {b!r}" for k, (a, b) in diff.items())
            raise StaleIndexError(
                f"The index was built with other settings ({detail}). "
                "Run `citewise ingest --rebuild` to re-embed everything."
            )
        if cached:
            self._checked_generation = meta.get("generation")

    def generation(self) -> str:
        """The stamp of the last write ("dirty-..." while one is under way); "" with no index."""
        col = self._get()  # fresh, not the cached handle: another process may have written
        return str((col.metadata or {}).get("generation", "")) if col is not None else ""

    def count(self) -> int:
        col = self._current()
        if col is None:
            return 0
        generation = str((col.metadata or {}).get("generation", ""))
        if generation.startswith("dirty") or self._counted[0] != generation:
            # Chroma counts every time (14 ms at 250k chunks); a finished write has its own generation.
            self._counted = (generation, col.count())
        return self._counted[1]

    def stats(self) -> dict[str, int]:
        col = self._current()
        if col is None:
            return {"papers": 0, "chunks": 0}
        papers = len(col.get(where={"position": 0}, include=[])["ids"])
        return {"papers": papers, "chunks": col.count()}

    # ---- reading ----------------------------------------------------------------------
    def iter_chunks(self, col=None, include_documents: bool = True) -> Iterator[tuple[str, dict, str | None]]:
        col = col if col is not None else self.collection
        include = ["metadatas", "documents"] if include_documents else ["metadatas"]
        offset = 0
        while True:
            page = col.get(include=include, limit=PAGE, offset=offset)
            if not page["ids"]:
                return
            docs = page.get("documents") or [None] * len(page["ids"])
            yield from zip(page["ids"], page["metadatas"], docs)
            offset += len(page["ids"])

    def paper_hashes(self, col=None) -> dict[str, tuple[str, list[str]]]:
        """paper id -> (content hash, sources) for every stored paper."""
        out = {}
        for _, meta, _ in self.iter_chunks(col, include_documents=False):
            if meta.get("position") == 0:
                out[meta["paper_id"]] = (meta["paper_hash"], json.loads(meta["sources"]))
        return out

    def containing(
        self, name: str, limit: int, filters: flt.Filters | None = None
    ) -> tuple[list[str], list[dict], list[str], list[list[float]]]:
        """Ids, metadata, documents and vectors of up to `limit` chunks that contain the name
        `name` (or its plural, `tx.name_forms`) as a token, case and all, within the filters."""
        col = self._current()
        if col is None or not name:
            return [], [], [], []
        cids = self.keyword_index().name_chunks(tx.name_forms(name), limit, filters)
        if not cids:
            return [], [], [], []
        got = col.get(ids=cids, include=["metadatas", "documents", "embeddings"])
        vectors = got.get("embeddings")
        return got["ids"], got["metadatas"], got["documents"], [] if vectors is None else list(vectors)

    def count_containing(self, name: str, limit: int) -> int:
        """How many chunks (counted up to `limit`) contain the name `name` in one of its forms."""
        if not name or self._current() is None:
            return 0
        return self.keyword_index().name_count(tx.name_forms(name), limit)

    def chunks(self, ids: list[str]) -> dict[str, tuple[str, dict]]:
        """chunk id -> (document, metadata) for the ids still stored."""
        if not ids:
            return {}
        got = self.collection.get(ids=list(ids), include=["metadatas", "documents"])
        return {
            cid: (doc or "", meta) for cid, doc, meta in zip(got["ids"], got["documents"], got["metadatas"])
        }

    def papers_at(self, first_chunks: dict[str, str]) -> dict[str, Paper]:
        """Papers by the id of their first chunk (paper id -> chunk id), which carries the record:
        a lookup by id, where `papers` has to search the metadata of every chunk."""
        if not first_chunks:
            return {}
        got = self.collection.get(ids=list(first_chunks.values()), include=["metadatas"])
        return {m["paper_id"]: paper_from_meta(m) for m in got["metadatas"] if "paper" in m}

    def closest(self, vector) -> float:
        """The cosine of the indexed chunk nearest `vector` (0 when the index is empty)."""
        col = self._current()
        if col is None or not col.count():
            return 0.0
        found = col.query(query_embeddings=[list(vector)], n_results=1, include=["distances"])
        distances = found["distances"][0] if found["distances"] else []
        return 1.0 - float(distances[0]) if distances else 0.0

    def paper_ids(self, filters: flt.Filters | None = None) -> set[str]:
        """The ids of the stored papers within `filters` (in the index's values)."""
        where = flt.chroma_where(filters)
        first = {"position": 0}
        got = self.collection.get(where={"$and": [where, first]} if where else first, include=[])
        return {cid.split("::")[0] for cid in got["ids"]}

    def papers(self, ids: list[str]) -> dict[str, Paper]:
        if not ids:
            return {}
        got = self.collection.get(
            where={"$and": [{"paper_id": {"$in": list(ids)}}, {"position": 0}]},
            include=["metadatas"],
        )
        return {m["paper_id"]: paper_from_meta(m) for m in got["metadatas"]}

    # ---- writing ----------------------------------------------------------------------
    def begin_rebuild(self) -> str:
        self._invalidate()
        side = f"{self.name}__rebuild"
        if self._get(side) is not None:
            self.client.delete_collection(side)
        self._get(side, create=True)
        return side

    def finish_rebuild(self, side: str) -> None:
        self._invalidate()
        if self._get() is not None:
            self.client.delete_collection(self.name)
        self._get(side).modify(name=self.name)

    def open_for_write(self, name: str | None = None):
        self._invalidate()
        col = self._get(name, create=True)
        self.check_fingerprint(col)
        self._before_write = str((col.metadata or {}).get("generation", ""))
        self._wrote = False
        self._stamp(col, "dirty-" + uuid.uuid4().hex)
        if (col.metadata or {}).get("schema") != SCHEMA_VERSION:
            self._migrate(col)
        return col

    def _migrate(self, col) -> None:
        """Add the filter fields to every chunk of an index written before they existed, from
        the paper record on each paper's first chunk; vectors and documents stay as they are."""
        self._wrote = True
        chunks = [(cid, meta) for cid, meta, _ in self.iter_chunks(col, include_documents=False)]
        records = {m["paper_id"]: paper_from_meta(m) for _, m in chunks if "paper" in m}
        ids = [cid for cid, _ in chunks]
        metas = [
            {**m, **(flt.fields(records[m["paper_id"]]) if m["paper_id"] in records else {})}
            for _, m in chunks
        ]
        for start in range(0, len(ids), PAGE):
            with uninterrupted():
                col.update(ids=ids[start : start + PAGE], metadatas=metas[start : start + PAGE])
        meta = {k: v for k, v in (col.metadata or {}).items() if not k.startswith("hnsw:")}
        col.modify(metadata={**meta, "schema": SCHEMA_VERSION})
        log.info("added the filter fields to %d chunks of an older index", len(ids))

    def require_filters(self, filters: flt.Filters | None) -> None:
        """A filtered search needs the filter fields on every chunk."""
        if filters and (self.collection.metadata or {}).get("schema") != SCHEMA_VERSION:
            raise StoreError(
                "This index was built before these filters existed: run `citewise ingest` once "
                "(it adds the fields in place, without re-embedding) to filter."
            )

    def resolve(self, filters: flt.Filters | None) -> flt.Filters:
        """`filters` in the values stored here (`filters.resolve`): an area said in words becomes
        the stored areas it names."""
        if not filters:
            return {}
        self.require_filters(filters)
        return flt.resolve(filters, self.facets() if "area" in filters else {})

    def facets(self) -> dict[str, list[str]]:
        """The values of each filter key present in the index, most common first."""
        if self._current() is None:
            return {k: [] for k in flt.KEYS}
        return self.keyword_index().values(flt.KEYS)

    def close_write(self, col) -> None:
        # An ingest that changed nothing keeps the generation, so what is derived from the
        # index (the keyword index, the map) stays current.
        unchanged = not self._wrote and self._before_write and not self._before_write.startswith("dirty")
        self._stamp(col, self._before_write if unchanged else uuid.uuid4().hex)
        self._invalidate()

    def _stamp(self, col, generation: str) -> None:
        meta = {k: v for k, v in (col.metadata or {}).items() if not k.startswith("hnsw:")}
        col.modify(metadata={**meta, "generation": generation})

    def add(
        self, col, entries: list[tuple[Paper, str, list[Chunk], list, list[str]]], replacing: set[str]
    ) -> None:
        """Add a batch of papers' chunks in one write, then delete the chunks of older versions
        of the papers in `replacing` (add first: a crash in between leaves both, never neither)."""
        self._wrote = True
        ids, vectors, docs, metas = [], [], [], []
        for paper, paper_hash, chunks, vecs, texts in entries:
            ids += [chunk_id(paper.id, paper_hash, c.position) for c in chunks]
            metas += [chunk_meta(paper, paper_hash, c) for c in chunks]
            vectors += list(vecs)
            docs += texts
        with uninterrupted():
            if ids:
                col.add(ids=ids, embeddings=vectors, documents=docs, metadatas=metas)
            new = set(ids)
            for paper, *_ in entries:
                if paper.id in replacing:
                    old = col.get(where={"paper_id": paper.id}, include=[])["ids"]
                    stale = [i for i in old if i not in new]
                    if stale:
                        col.delete(ids=stale)

    def update_sources(self, col, paper_id: str, sources: list[str]) -> None:
        self._wrote = True
        got = col.get(where={"paper_id": paper_id}, include=["metadatas"])
        metas = [{**m, "sources": json.dumps(sources)} for m in got["metadatas"]]
        for m in metas:
            if m.get("position") == 0:
                record = json.loads(m["paper"])
                record["sources"] = sources
                m["paper"] = json.dumps(record, ensure_ascii=False)
        if got["ids"]:
            with uninterrupted():
                col.update(ids=got["ids"], metadatas=metas)

    def delete_paper(self, col, paper_id: str) -> None:
        self._wrote = True
        with uninterrupted():
            col.delete(where={"paper_id": paper_id})

    def drop(self) -> None:
        self._invalidate()
        if self._get() is not None:
            self.client.delete_collection(self.name)
        self.drop_keyword_index()

    def drop_keyword_index(self) -> None:
        """Delete the keyword index; the next search builds it again from Chroma."""
        with self._lock:
            if self._keyword is not None:
                self._keyword.close()
                self._keyword, self._keyword_stamp = None, None
            shutil.rmtree(self.keyword_dir, ignore_errors=True)

    # ---- keyword index ----------------------------------------------------------------
    def keyword_index(self, progress=None):
        """The keyword index, first brought in step with Chroma when Chroma changed since
        (`progress(done, total)` follows the chunks it adds)."""
        from rag.index.keyword import KeywordIndex, collection_source

        col = self.collection
        meta = col.metadata or {}
        generation = str(meta.get("generation", ""))
        # A finished write leaves a new generation, so that alone names the state; while one is under
        # way (dirty) the count tells its steps apart.
        stamp = f"{generation}:{self.count()}" if generation.startswith("dirty") else generation
        with self._lock:
            if self._keyword is None:
                self._keyword = KeywordIndex(self.keyword_dir)
            if self._keyword_stamp != stamp:
                self._keyword.sync(
                    stamp,
                    *collection_source(col, 20 * PAGE),
                    reset=str(meta.get("schema")),
                    progress=progress,
                )
                self._keyword_stamp = stamp
            return self._keyword


def store_from_settings(settings, embedder) -> Store:
    """The configured store, stamped with what makes its vectors comparable."""
    return Store(
        settings.chroma_dir,
        chroma_url=settings.chroma_url,
        keyword_dir=settings.data_dir / "keyword",
        fingerprint={
            "embedder": embedder.model_id,
            "chunk_tokens": settings.chunk_tokens,
            "chunk_overlap": OVERLAP_SENTENCES,
            "chunk_vectors": CHUNK_VECTORS,
        },
    )
