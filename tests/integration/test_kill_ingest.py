"""Killing `citewise ingest` (SIGKILL: no cleanup runs) at several moments never corrupts the
index: what was stored before stays searchable, Chroma and the keyword index agree, and the next
ingest finishes the job."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bench.corpus import write
from tests.conftest import SEEDS

CHECK = """
import json
from rag.answer.pipeline import Pipeline
p = Pipeline()
stats = p.store.stats()
hits = p.search("How does knowledge entropy change during pretraining?", 3)
print(json.dumps({"papers": stats["papers"], "chunks": stats["chunks"], "chroma": p.store.count(),
                  "keyword": p.store.keyword_index().size, "top": hits[0].paper.id if hits else None}))
"""


def _env(data) -> dict[str, str]:
    # The map is laid out after the index is complete and written in one rename (tests/test_map.py):
    # this test is about the index, and the layout only slowed each run.
    return {**os.environ, "RAG_DATA_DIR": str(data), "RAG_MAP__AFTER_INGEST": "false"}


def _ingest(env, *paths) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rag.cli", "ingest", "-q", *map(str, paths)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip


def _check(env) -> dict:
    out = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_ingest_killed_at_several_moments_never_corrupts_the_index(tmp_path):
    env = _env(tmp_path / "data")
    synthetic, _ = write(400, tmp_path / "synthetic")
    assert _ingest(env, SEEDS).wait(timeout=900) == 0
    base = _check(env)
    assert base["papers"] == 53 and base["top"] == "eHehzSDUFp"

    for delay in (2.0, 6.0, 10.0, 14.0):  # loading, embedding, writing batches
        proc = _ingest(env, SEEDS, synthetic)
        time.sleep(delay)
        if proc.poll() is not None:
            break  # it finished before this moment: nothing left to interrupt
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state = _check(env)
        assert state["chroma"] == state["keyword"] == state["chunks"], state
        assert 53 <= state["papers"] <= 453 and state["top"] == "eHehzSDUFp", (delay, state)

    assert _ingest(env, SEEDS, synthetic).wait(timeout=1800) == 0
    final = _check(env)
    assert final["papers"] == 453 and final["chroma"] == final["keyword"]
    again = subprocess.run([sys.executable, "-m", "rag.cli", "ingest", str(SEEDS), str(synthetic)],
                           env=env, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert "chunks embedded: 0" in again.stdout
