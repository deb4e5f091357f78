"""Real components: the shipped embedding model, a real Chroma on disk, the real llama.cpp."""

from __future__ import annotations

import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from rag.index.embedding import embedder_from_settings
from rag.index.ingest import ingest
from rag.index.store import store_from_settings
from rag.settings import Settings
from tests.conftest import ROOT, SEEDS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def seed_dir(tmp_path_factory) -> Path:
    """A data directory with the seeds indexed by the real model (built once per test run)."""
    data = tmp_path_factory.mktemp("seed-index")
    # One ONNX folder, with its kept measurement of which backend is faster here, for the index and
    # for every test that reads it (with `seed_settings` or this folder's own models): an index
    # embedded by one backend is stale to the other, and two measurements may disagree.
    shared = ROOT / "data" / "models" / "all-MiniLM-L6-v2-onnx"
    shared.mkdir(parents=True, exist_ok=True)
    (data / "models").mkdir()
    (data / "models" / shared.name).symlink_to(shared, target_is_directory=True)
    settings = Settings(data_dir=data)
    embedder = embedder_from_settings(settings)
    summary = ingest(
        [SEEDS],
        store_from_settings(settings, embedder),
        embedder,
        chunk_tokens=settings.chunk_tokens,
    )
    assert summary.papers == 53 and summary.duplicates_merged == 4 and not summary.errors
    return data


@pytest.fixture(scope="session")
def seed_settings(seed_dir) -> Settings:
    # The shipped models are assembled into ./data/models by `make install`; reuse them.
    return Settings(data_dir=seed_dir, models_path=ROOT / "data" / "models")


@contextmanager
def running(cmd: list[str], ready_url: str, *, timeout: float = 300):
    """Run a server process until the block ends; wait until `ready_url` answers 200."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if httpx.get(ready_url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail(f"{cmd[0]} did not answer at {ready_url} within {timeout:.0f} s")
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=20)
