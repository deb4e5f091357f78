"""The conference-scale path end to end at N = 1,000: distractors generated from the seeds with the
real embedder and checked, an index of the seeds among them, the gold set's retrieval scored at
N = 0 and N = 1,000, the report's distractor section and plot. (The full run, N = 10,000 with
answers, is documented in docs/evaluation.md.)"""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from eval.harness import evaluate
from eval.scale import FOLDER
from rag.answer.pipeline import Pipeline

pytestmark = [pytest.mark.slow, pytest.mark.heavy]


def test_distractor_path_at_1000(seed_settings, tmp_path):
    # Distractor indexes live under <data_dir>/distractors-v3: a copy keeps the shared seed index clean.
    data = tmp_path / "data"
    shutil.copytree(seed_settings.data_dir, data)
    base = Pipeline(seed_settings.model_copy(update={"data_dir": data}))
    folder, summary = evaluate(
        base,
        configs=["hybrid"],
        retrieval_only=True,
        out=tmp_path / "report",
        distractors=[0, 1000],
        command="test",
    )
    configs = summary["configs"]
    assert set(configs) == {"hybrid N=0", "hybrid N=1000"}
    corpus = summary["distractor_corpus"]
    assert corpus["papers"] == 1000 and corpus["index_papers"] == 1053
    assert corpus["max_cosine"] <= 0.9  # no distractor sentence is a near copy of a seed sentence
    stats = json.loads((data / FOLDER / "corpus-s0-1000.stats.json").read_text())
    assert stats["dropped"] < 0.05 * stats["sentences"]
    assert stats["title_max_cosine"] <= 0.9  # nor any title a near copy of a seed title or sentence
    # no twins: no distractor is much closer to a seed paper, as a whole, than the two closest seed
    # papers are to each other (the v1 generator's twins reached 0.92 against 0.77)
    assert stats["paper_cosine_max"] <= stats["seed_paper_cosine_max"] + 0.05, stats
    # ingest kept every paper's sentence vectors beside the index: ranking read them, not the embedder
    kept = sqlite3.connect(data / FOLDER / "n1000" / "sentences" / "vectors.sqlite")
    assert kept.execute("SELECT count(*) FROM vectors").fetchone()[0] >= 1000  # one row per distinct abstract
    kept.close()
    # names pull their paper: at 1,000 distractors the seeds stay found
    assert configs["hybrid N=1000"]["hit@5"] >= 0.95, configs["hybrid N=1000"]
    assert configs["hybrid N=0"]["hit@5"] >= configs["hybrid N=1000"]["hit@5"]
    report = (folder / "report.md").read_text()
    assert "## Against distractors" in report and "| hybrid N=1000 |" in report
    assert (folder / "distractors.png").stat().st_size > 5_000
