"""Opening Chroma (a folder on disk or a server) and writing to it safely: the errors a store
raises with what to do, and Ctrl-C held back until a write is done."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse


class StoreError(RuntimeError):
    """The index cannot be used (missing, locked, unreachable); the message says what to do."""


class StaleIndexError(StoreError):
    """The index was built with other embedding or chunking settings."""


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Ctrl-C waits until the write inside is done, then interrupts: Chroma's collection stopped
    in the middle of a write was left unreadable ("Error finding id"). Outside the main thread
    (the chat page) there is no Ctrl-C to defer."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def open_client(chroma_dir: Path, chroma_url: str | None):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    opts = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    try:
        if chroma_url:
            u = urlparse(chroma_url)
            return chromadb.HttpClient(
                host=u.hostname or "127.0.0.1",
                port=u.port or 8000,
                ssl=u.scheme == "https",
                settings=opts,
            )
        chroma_dir.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(chroma_dir), settings=opts)
    except Exception as exc:
        where = chroma_url or chroma_dir
        raise StoreError(f"Cannot open the Chroma index at {where}: {exc}") from exc
