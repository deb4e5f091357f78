"""BM25 keyword index (llama-index's BM25Retriever over bm25s), persisted beside the vectors
and stamped with the Chroma generation it was built from."""

from __future__ import annotations

import copy
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from rag import filters as flt

log = logging.getLogger(__name__)

STAMP_FILE = "citewise_stamp.json"


def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


class KeywordIndex:
    def __init__(self, retriever: Any | None, size: int):
        self.retriever = retriever
        self.size = size

    @classmethod
    def build(cls, rows: list[tuple[str, str, dict[str, Any]]]) -> KeywordIndex:
        """rows: (chunk id, text, metadata) for every chunk in the store."""
        if not rows:
            return cls(None, 0)
        from llama_index.core.schema import TextNode
        from llama_index.retrievers.bm25 import BM25Retriever

        # The filter fields are for masks, not words to match ("2025", "oral").
        hidden = flt.FIELD_KEYS
        nodes = [
            TextNode(id_=cid, text=text, metadata=meta, excluded_embed_metadata_keys=hidden)
            for cid, text, meta in rows
        ]
        retriever = BM25Retriever.from_defaults(
            nodes=nodes, stemmer=_stemmer(), language="english", similarity_top_k=10
        )
        return cls(retriever, len(nodes))

    @classmethod
    def load(cls, directory: Path, stamp: tuple[str, int]) -> KeywordIndex | None:
        """The saved index if it was built from exactly this generation and count."""
        try:
            saved = json.loads((directory / STAMP_FILE).read_text())
            if tuple(saved["stamp"]) != tuple(stamp):
                return None
            if stamp[1] == 0:
                return cls(None, 0)
            from llama_index.retrievers.bm25 import BM25Retriever

            retriever = BM25Retriever.from_persist_dir(str(directory), show_progress=False)
            retriever.stemmer = _stemmer()
            return cls(retriever, stamp[1])
        except (OSError, ValueError, KeyError) as exc:
            log.debug("keyword index at %s not reusable: %s", directory, exc)
            return None

    def save(self, directory: Path, stamp: tuple[str, int]) -> None:
        # Write beside, then swap: a reader never sees half an index.
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".kw-", dir=directory.parent))
        try:
            if self.retriever is not None:
                self.retriever.persist(str(tmp))
            (tmp / STAMP_FILE).write_text(json.dumps({"stamp": list(stamp)}))
            old = directory.with_name(directory.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            if directory.exists():
                os.replace(directory, old)
            os.replace(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:
            log.warning("could not save the keyword index (%s); it will be rebuilt next time", exc)
            shutil.rmtree(tmp, ignore_errors=True)

    def search(
        self, query: str, n: int, filters: flt.Filters | None = None
    ) -> list[tuple[str, str, dict[str, Any], float]]:
        """(chunk id, text, metadata, BM25 score) of the best `n` chunks with a positive score,
        among the chunks within `filters`."""
        if self.retriever is None or not query.strip():
            return []
        from llama_index.core.schema import QueryBundle

        # A shallow copy per call (the BM25 matrices are shared): the shared retriever is never
        # mutated, so concurrent searches with different depths or filters cannot see each other's.
        retriever = copy.copy(self.retriever)
        retriever.similarity_top_k = max(1, min(n, self.size))
        if filters:
            mask = [int(flt.matches(doc, filters)) for doc in self.retriever.corpus]
            if not any(mask):
                return []
            retriever.corpus_weight_mask = mask
        hits = retriever.retrieve(QueryBundle(query))
        return [
            (h.node.node_id, h.node.get_content(), h.node.metadata, float(h.score or 0))
            for h in hits
            if (h.score or 0) > 0
        ]
