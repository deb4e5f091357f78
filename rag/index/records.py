"""How a paper and its chunks are laid out in Chroma: the metadata of each chunk (with the filter
fields), the full paper record on the first chunk, and the way back to typed objects."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rag import filters as flt
from rag.types import Chunk, Paper


@dataclass
class StoredChunk:
    chunk: Chunk
    paper_id: str
    title: str
    url: str
    sources: list[str]


def chunk_id(paper_id: str, paper_hash: str, position: int) -> str:
    """A chunk's id in the store: a new version of a paper gets new ids, and a paper's record is
    found by the id of its first chunk."""
    return f"{paper_id}::{paper_hash[:12]}::{position}"


def chunk_meta(paper: Paper, paper_hash: str, chunk: Chunk) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "paper_id": paper.id,
        "paper_hash": paper_hash,
        "position": chunk.position,
        "start": chunk.start,
        "end": chunk.end,
        "title": paper.title,
        "url": paper.url,
        "sources": json.dumps(paper.sources),
        **flt.fields(paper),
    }
    if chunk.position == 0:
        # The full record rides on the first chunk, so search needs no second store.
        meta["paper"] = json.dumps(
            {
                "id": paper.id,
                "abstract": paper.abstract,
                "title": paper.title,
                "url": paper.url,
                "authors": paper.authors,
                "year": paper.year,
                "venue": paper.venue,
                "status": paper.status,
                "sources": paper.sources,
                "extra": paper.extra,
            },
            ensure_ascii=False,
            default=str,
        )
    return meta


def paper_from_meta(meta: dict[str, Any]) -> Paper:
    return Paper(**json.loads(meta["paper"]))


def stored_chunk(meta: dict[str, Any], doc: str | None) -> StoredChunk:
    text = doc or ""
    # Documents hold "title. chunk" (what was embedded); offsets recover the chunk alone.
    length = int(meta["end"]) - int(meta["start"])
    chunk = Chunk(
        meta["paper_id"],
        int(meta["position"]),
        text[len(text) - length :],
        int(meta["start"]),
        int(meta["end"]),
    )
    return StoredChunk(
        chunk, meta["paper_id"], meta.get("title", ""), meta.get("url", ""), json.loads(meta["sources"])
    )
