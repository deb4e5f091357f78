"""A read-only index directory: a clear error from the CLI, no traceback, nothing lost.

Root ignores file modes, so as root the command runs without the capabilities that let it
(CAP_DAC_OVERRIDE and friends, dropped with util-linux `setpriv`): the same checks a normal user
meets."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.conftest import SEEDS

DROP = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"] if os.geteuid() == 0 else []


def _chmod_tree(root, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | 0o200 if writable else mode & ~0o222)


def _cli(data, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAG_DATA_DIR": str(data)}
    cmd = [*DROP, sys.executable, "-m", "rag.cli", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def test_read_only_index_is_a_clear_error_and_loses_nothing(seed_dir, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(seed_dir, data)
    more = tmp_path / "more.jsonl"
    more.write_text('{"id": "new", "abstract": "Fresh results on graph sparsification."}\n')
    _chmod_tree(data, writable=False)
    try:
        run = _cli(data, "ingest", str(more))
        assert run.returncode == 1, run.stdout + run.stderr
        assert "error: Cannot open the Chroma index" in run.stderr and "readonly" in run.stderr
        assert "Traceback" not in run.stderr
    finally:
        _chmod_tree(data, writable=True)
    after = _cli(data, "ingest", str(SEEDS))
    assert after.returncode == 0, after.stderr[-2000:]
    assert "papers new: 0" in after.stdout and "chunks embedded: 0" in after.stdout
