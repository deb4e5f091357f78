"""The paper formats users have, mapped onto the generic record `readers.paper_from_record` reads:
OpenReview API notes (v2 `{"value": ...}` fields and v1 plain values), the arXiv metadata snapshot,
and BibTeX entries. Each format is recognized by its content, not by the file's extension."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

STATUSES = ("oral", "spotlight", "poster", "withdrawn", "rejected", "submitted")
_ARXIV_NEW_ID = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}(v\d+)?$")


# ---- OpenReview


def is_openreview(row: dict[str, Any]) -> bool:
    return isinstance(row.get("content"), dict) and ("forum" in row or "id" in row)


def _value(content: dict[str, Any], key: str) -> Any:
    field = content.get(key)
    return field.get("value") if isinstance(field, dict) else field  # v2 wraps every field


def venue_status(venue: str) -> tuple[str, str]:
    """("ICLR 2025", "oral") from "ICLR 2025 Oral"; the status words leave the venue name."""
    lowered = venue.lower()
    status = next((s for s in STATUSES if s in lowered), "")
    if "desk rejected" in lowered:
        status = "rejected"
    name = re.sub(
        r"\b(?:submitted to|conference|oral|spotlight|poster|withdrawn|desk|rejected|submission)\b",
        " ",
        venue,
        flags=re.I,
    )
    return re.sub(r"\s+", " ", name).strip(" ,-"), status


def from_openreview(row: dict[str, Any]) -> dict[str, Any]:
    content = row["content"]
    venue, status = venue_status(str(_value(content, "venue") or ""))
    forum = row.get("forum") or row.get("id")
    year = re.search(r"\b(19|20)\d{2}\b", venue)
    created = row.get("cdate") or row.get("tcdate")
    return {
        "id": forum,
        "title": _value(content, "title"),
        "abstract": _value(content, "abstract"),
        "authors": _value(content, "authors"),
        "venue": venue,
        "status": status,
        "year": year.group(0) if year else _year_of_ms(created),
        "keywords": _value(content, "keywords"),
        "primary_area": _value(content, "primary_area"),
        "url": f"https://openreview.net/forum?id={forum}" if forum else None,
    }


def _year_of_ms(ms: Any) -> int | None:
    try:
        return datetime.fromtimestamp(int(ms) / 1000, tz=UTC).year
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def openreview_notes(data: Any) -> list[dict[str, Any]] | None:
    """The notes of an OpenReview API response or dump: `{"notes": [...]}` or a list of notes.
    None when `data` is something else."""
    notes = data.get("notes") if isinstance(data, dict) else data
    if isinstance(notes, list) and notes and all(isinstance(n, dict) for n in notes):
        if any(is_openreview(n) for n in notes):
            return notes
    return None


# ---- arXiv


def is_arxiv(row: dict[str, Any]) -> bool:
    return "categories" in row and "id" in row and ("update_date" in row or "versions" in row)


def from_arxiv(row: dict[str, Any]) -> dict[str, Any]:
    arxiv_id = str(row["id"]).strip()
    new_id = _ARXIV_NEW_ID.match(arxiv_id)
    year = 2000 + int(new_id.group(1)) if new_id else str(row.get("update_date") or "")[:4] or None
    parsed = row.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        authors = [
            " ".join(p for p in (a[1], a[0]) if p).strip() for a in parsed if isinstance(a, list) and a
        ]
    else:
        authors = [a.strip() for a in re.split(r",\s*|\s+and\s+", str(row.get("authors") or "")) if a.strip()]
    return {
        "id": f"arXiv:{arxiv_id}",
        "title": re.sub(r"\s+", " ", str(row.get("title") or "")),
        "abstract": row.get("abstract"),
        "authors": authors,
        "venue": "arXiv",
        "year": year,
        "categories": row.get("categories"),
        "url": f"https://arxiv.org/abs/{arxiv_id}",
    }


def to_record(row: dict[str, Any]) -> dict[str, Any]:
    """A JSON record in whichever known format, as a generic record."""
    if is_openreview(row):
        return from_openreview(row)
    if is_arxiv(row):
        return from_arxiv(row)
    return row


# ---- BibTeX


def looks_like_bibtex(text: str) -> bool:
    return re.search(r"^\s*@\w+\s*[{(]", text, re.M) is not None


def bibtex_records(text: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line, record) per entry with an abstract, or (line, error) for an entry without one and
    for a block the parser could not read."""
    import logging

    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors

    # The parser logs each bad block as a warning: we report them ourselves, once, with the line.
    logging.getLogger("bibtexparser").setLevel(logging.ERROR)
    library = bibtexparser.parse_string(
        text, append_middleware=[LatexDecodingMiddleware(), SeparateCoAuthors()]
    )
    out: list[tuple[int, dict[str, Any] | str]] = []
    for block in library.failed_blocks:
        out.append((block.start_line + 1, f"unreadable BibTeX entry ({_first_line(block.raw)})"))
    for entry in library.entries:
        fields = {k.lower(): v for k, v in entry.fields_dict.items()}
        line = entry.start_line + 1
        if not str(fields.get("abstract", "")).strip():
            out.append((line, f"entry '{entry.key}' has no abstract, skipped"))
            continue
        value = {k: f.value for k, f in fields.items()}
        authors = value.get("author", [])
        authors = [_first_last(a) for a in (authors if isinstance(authors, list) else [authors])]
        out.append(
            (
                line,
                {
                    "id": value.get("doi") or entry.key,
                    "title": _unbrace(value.get("title", "")),
                    "abstract": _unbrace(value["abstract"]),
                    "authors": authors,
                    "venue": _unbrace(value.get("booktitle") or value.get("journal") or ""),
                    "year": value.get("year"),
                    "url": value.get("url")
                    or (f"https://doi.org/{value['doi']}" if value.get("doi") else None),
                    "bibtex_key": entry.key,
                },
            )
        )
    return iter(sorted(out, key=lambda pair: pair[0]))


def _first_last(name: str) -> str:
    """BibTeX's "Last, First" as "First Last"."""
    last, sep, first = _unbrace(name).partition(", ")
    return f"{first} {last}" if sep else last


def _unbrace(text: str) -> str:
    return re.sub(r"\s+", " ", str(text).replace("{", "").replace("}", "")).strip()


def _first_line(raw: str) -> str:
    return raw.strip().splitlines()[0][:60] if raw.strip() else "empty"
