"""Every submission of an OpenReview venue (API v2), the way openreview-py's `get_all_notes` reads
them: the venue group names its submission invitation (`content.submission_name`, "Submission"
by default), and `/notes?invitation=<venue>/-/<name>` is read a page of `PAGE` at a time. Each note
is written as the API gives it (title, abstract, authors, venue = decision or status, primary area,
keywords); `rag.index.formats.from_openreview` reads it at ingest."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rag.fetch.http import FetchError, Polite
from rag.fetch.output import Output

API = "https://api2.openreview.net"
PAGE = 1000
INTERVAL = 1.0  # seconds between requests: OpenReview limits clients that hurry


def _notes_page(text: str) -> dict[str, Any]:
    data = json.loads(text)  # a page cut short raises ValueError, and is asked for again
    if not isinstance(data, dict) or not isinstance(data.get("notes"), list):
        raise ValueError("no notes in the page")
    return data


def invitation(http: Polite, venue_id: str) -> str:
    """The venue's submission invitation; a clear error when OpenReview has no such venue."""
    status, data = http.get("/groups", {"id": venue_id}, json.loads)
    groups = data.get("groups") if status == 200 and isinstance(data, dict) else None
    if not groups:
        if status in (200, 400, 403, 404):
            raise FetchError(
                f"OpenReview has no venue {venue_id!r} (a venue id looks like ICLR.cc/2025/Conference)"
            )
        raise FetchError(f"OpenReview answered {status} for the venue {venue_id!r}")
    content = groups[0].get("content") or {}
    name = (content.get("submission_name") or {}).get("value") or "Submission"
    return f"{venue_id}/-/{name}"


def fetch(
    venue_id: str, out: Output, http: Polite, progress: Callable[[int, int | None], None] = lambda n, t: None
) -> int:
    """Write every submission of the venue to `out`, from where a stopped fetch left off; returns
    how many records the file holds."""
    if out.complete:
        return len(out.seen)
    name = invitation(http, venue_id)
    offset = out.next
    progress(offset, out.total)
    while True:
        status, data = http.get("/notes", {"invitation": name, "offset": offset, "limit": PAGE}, _notes_page)
        if status >= 400:
            raise FetchError(
                f"OpenReview answered {status} for the submissions of {venue_id!r}: {str(data)[:200]}"
            )
        notes = [n for n in data["notes"] if isinstance(n, dict) and n.get("id")]
        total = data.get("count") if isinstance(data.get("count"), int) else None
        offset += len(data["notes"])
        out.add(notes, offset, total)
        progress(offset, total)
        if not data["notes"] or (total is not None and offset >= total):
            break
    if not out.seen:
        raise FetchError(f"OpenReview lists no submissions for {venue_id!r}")
    out.finish()
    return len(out.seen)
