"""Papers from the arXiv API (`/api/query`, an Atom feed): a category ("cs.LG") or any arXiv
search ("ti:diffusion AND cat:cs.CV"), within submission dates, `PAGE` results a request and 3
seconds between requests, as arXiv's terms of use ask. Each entry becomes the generic record
`citewise ingest` reads (id arXiv:<id>, title, abstract, authors, year, categories, url)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import date
from typing import Any

from rag.fetch.http import FetchError, Polite
from rag.fetch.output import Output

API = "https://export.arxiv.org"
PAGE = 100
INTERVAL = 3.0
NS = {"a": "http://www.w3.org/2005/Atom", "os": "http://a9.com/-/spec/opensearch/1.1/"}
_CATEGORY = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")


def search_query(query: str, since: date | None = None, until: date | None = None) -> str:
    """The API's search_query: a bare category becomes cat:..., words all:...; dates a range."""
    q = query.strip()
    if _CATEGORY.match(q) and "." in q:
        q = f"cat:{q}"
    elif ":" not in q:
        q = f"all:{q}"
    if since or until:
        start = (since or date(1991, 1, 1)).strftime("%Y%m%d") + "0000"
        end = (until or date.today()).strftime("%Y%m%d") + "2359"
        q = f"({q}) AND submittedDate:[{start} TO {end}]"
    return q


def _feed(text: str) -> tuple[list[dict[str, Any]], int | None]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:  # a page cut short: asked for again
        raise ValueError(str(exc)) from exc
    total = root.findtext("os:totalResults", namespaces=NS)
    return [_record(e) for e in root.findall("a:entry", NS)], int(
        total
    ) if total and total.isdigit() else None


def _record(entry: ET.Element) -> dict[str, Any]:
    link = entry.findtext("a:id", default="", namespaces=NS).strip()
    arxiv_id = re.sub(r"v\d+$", "", link.rsplit("/abs/", 1)[-1])
    published = entry.findtext("a:published", default="", namespaces=NS)
    text = lambda tag: re.sub(r"\s+", " ", entry.findtext(tag, default="", namespaces=NS)).strip()  # noqa: E731
    return {
        "id": f"arXiv:{arxiv_id}",
        "title": text("a:title"),
        "abstract": text("a:summary"),
        "authors": [
            a.findtext("a:name", default="", namespaces=NS).strip() for a in entry.findall("a:author", NS)
        ],
        "venue": "arXiv",
        "year": int(published[:4]) if published[:4].isdigit() else None,
        "categories": " ".join(c.get("term", "") for c in entry.findall("a:category", NS)),
        "url": f"https://arxiv.org/abs/{arxiv_id}",
    }


def fetch(query: str, out: Output, http: Polite, *, since: date | None = None, until: date | None = None,
          limit: int | None = None, progress: Callable[[int, int | None], None] = lambda n, t: None) -> int:  # fmt: skip
    """Write the query's papers to `out` (at most `limit`), from where a stopped fetch left off."""
    if out.complete:
        return len(out.seen)
    q = search_query(query, since, until)
    offset = out.next
    progress(offset, out.total)
    while limit is None or offset < limit:
        size = PAGE if limit is None else min(PAGE, limit - offset)
        status, data = http.get("/api/query", {"search_query": q, "start": offset, "max_results": size,
                                               "sortBy": "submittedDate", "sortOrder": "ascending"}, _feed)  # fmt: skip
        if status >= 400:
            raise FetchError(f"arXiv answered {status} for {q!r}: {str(data)[:200]}")
        records, total = data
        records = [r for r in records if r["id"] != "arXiv:" and r["abstract"]]
        offset += size if records else 0
        out.add(records, offset, total)
        progress(offset if total is None else min(offset, total), total)
        if not records or (total is not None and offset >= total):
            break
    if not out.seen:
        raise FetchError(f"arXiv found nothing for {q!r}")
    out.finish()
    return len(out.seen)
