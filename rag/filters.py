"""Metadata filters (`--filter venue=ICLR 2025 --filter status=oral`): parsed once, stored as
lower-case fields on every chunk, and applied the same way on the dense side (a Chroma `where`)
and on the keyword and name sides (SQL conditions in rag/keyword.py), so a filtered search never
returns an unfiltered paper. Several values of one key mean "any of them"; different keys must all hold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rag.types import Paper

KEYS = ("venue", "year", "status", "area")
PREFIX = "f_"
FIELD_KEYS = [PREFIX + k for k in KEYS]  # the metadata keys they are stored under

Filters = dict[str, tuple[str, ...]]


class FilterError(ValueError):
    pass


def _norm(value: Any) -> str:
    return " ".join(str(value or "").split()).lower()


def parse(items: Iterable[str]) -> Filters:
    """`["venue=ICLR 2025", "year=2025", "status=oral", "status=spotlight"]` -> filters."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key, value = key.strip().lower(), _norm(value)
        if not sep or not value:
            raise FilterError(f"filter {item!r} is not KEY=VALUE (keys: {', '.join(KEYS)})")
        if key not in KEYS:
            raise FilterError(f"unknown filter key {key!r}; use one of {', '.join(KEYS)}")
        out.setdefault(key, []).append(value)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def from_mapping(values: Mapping[str, Iterable[str] | str | None]) -> Filters:
    """Filters from a form (the chat page's settings): empty choices are no filter."""
    out: Filters = {}
    for key, chosen in values.items():
        if key not in KEYS or not chosen:
            continue
        chosen = [chosen] if isinstance(chosen, str) else list(chosen)
        kept = tuple(dict.fromkeys(_norm(v) for v in chosen if _norm(v)))
        if kept:
            out[key] = kept
    return out


def combine(*filters: Filters | None) -> Filters:
    """Filters that must all hold: keys joined, the values of a key both give intersected."""
    out: dict[str, tuple[str, ...]] = {}
    for f in filters:
        for key, values in (f or {}).items():
            out[key] = tuple(v for v in out[key] if v in values) if key in out else tuple(values)
    return out


def resolve(filters: Filters | None, stored: Mapping[str, Iterable[str]]) -> Filters:
    """Filters in the index's own values: an area said in words is every stored area it begins or
    names ("computer vision" -> "applications to computer vision, audio, language, ..."). A value
    nothing stored matches stays as given, so the filter keeps everything out."""
    out: Filters = {}
    for key, values in (filters or {}).items():
        known = list(stored.get(key, ()))
        found: list[str] = []
        for v in values:
            matched = [k for k in known if k == v] or [k for k in known if key == "area" and v in k]
            found += matched or [v]
        out[key] = tuple(dict.fromkeys(found))
    return out


def fields(paper: Paper) -> dict[str, str]:
    """The filter fields stored on each of the paper's chunks."""
    return {
        PREFIX + "venue": _norm(paper.venue),
        PREFIX + "year": str(paper.year or ""),
        PREFIX + "status": _norm(paper.status),
        PREFIX + "area": _norm((paper.extra or {}).get("primary_area", "")),
    }


def chroma_where(filters: Filters | None) -> dict[str, Any] | None:
    clauses = [{PREFIX + k: {"$in": list(v)}} for k, v in sorted((filters or {}).items())]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def matches(metadata: Mapping[str, Any], filters: Filters | None) -> bool:
    return all(str(metadata.get(PREFIX + k, "")) in v for k, v in (filters or {}).items())


def describe(filters: Filters | None) -> str:
    """ "status: oral or spotlight; year: 2025" (for headers and messages)."""
    return "; ".join(f"{k}: {' or '.join(v)}" for k, v in sorted((filters or {}).items()))
