"""`python -m bench --quick` runs every benchmark end to end at a small size (the full run is
`python -m bench --size 10k`, results in docs/benchmarks.md)."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
@pytest.mark.heavy
def test_quick_benchmark_writes_every_section(tmp_path):
    out = tmp_path / "bench.md"
    run = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    text = out.read_text()
    for section in (
        "## Ingest",
        "## Search",
        "## Answers",
        "## Prefill options",
        "## Cold start",
        "## Scale",
    ):
        assert section in text
    scale_row = next(line for line in text.splitlines() if line.startswith("| 300 |"))
    hit = float(scale_row.rsplit("|", 2)[-2].split()[0])
    assert hit >= 0.9, scale_row  # planted facts are found at this size
