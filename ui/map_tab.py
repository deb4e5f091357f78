"""The chat page's Map tab: the conference map (rag/map/) in a frame. The page is one
self-contained file served from the map's folder, so the tab works without the network."""

from __future__ import annotations

import hashlib
import html
import logging
import tempfile
from pathlib import Path

from rag.answer.pipeline import Pipeline
from rag.index.store import StoreError
from rag.map.build import ensure_map, map_folder
from rag.map.render import write_html

log = logging.getLogger(__name__)
# Where the page goes when the data folder is read-only (served as well, see `served_folders`).
SPARE = Path(tempfile.gettempdir()) / "citewise-map"
EMPTY = "<p class='cw-map-note'>The map appears once papers are indexed (`citewise ingest`).</p>"


def served_folders(pipeline: Pipeline) -> list[str]:
    """The folders the page may be served from (Gradio serves only the paths it is given)."""
    return [str(map_folder(pipeline.settings, pipeline.store)), str(SPARE)]


def map_view(pipeline: Pipeline) -> str:
    """The tab's HTML: a frame showing the current map, laid out first if the index changed."""
    store = pipeline.store
    try:
        if not store.exists():
            return EMPTY
        folder = map_folder(pipeline.settings, store)
        conference_map = ensure_map(folder, store)
        page = _page(conference_map, folder)
    except StoreError as exc:
        return f"<p class='cw-map-note'>{html.escape(str(exc))}</p>"
    except Exception as exc:  # a broken map must not take the chat page down with it
        log.exception("the map could not be made")
        return f"<p class='cw-map-note'>The map could not be made: {html.escape(str(exc))}</p>"
    version = hashlib.sha1(conference_map.signature.encode()).hexdigest()[:10]
    return (
        f'<iframe id="cw-map-frame" title="Map of the indexed papers" src="/gradio_api/file={page}?v={version}" '
        'style="width:100%;height:78vh;border:1px solid #ddd;border-radius:6px"></iframe>'
    )


def _page(conference_map, folder: Path) -> Path:
    """map.html beside the map, written again when the map is newer (or in SPARE, read-only)."""
    title = conference_map.info.get("venue") or "citewise map"
    for target in (folder, SPARE):
        page = target / "map.html"
        try:
            stamp = target / "map.html.signature"
            if page.exists() and stamp.exists() and stamp.read_text() == conference_map.signature:
                return page
            write_html(conference_map, page, title)
            stamp.write_text(conference_map.signature)
            return page
        except OSError as exc:
            log.info("map page not written to %s: %s", target, exc)
    raise StoreError(
        "The map page could not be written anywhere (the data folder and the temp folder are read-only)."
    )
