"""The ONNX embedder: fp32 gives the torch model's vectors without importing torch; int8 is its own
embedder (its own id, so an index never mixes the two)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rag.index.embedding import SentenceTransformerEmbedder, onnx_dir
from rag.index.embedding.onnx import OnnxEmbedder, export
from rag.settings import Settings
from tests.conftest import ROOT

TEXTS = [
    "Knowledge entropy declines as pretraining advances.",
    "We release BirdSet, a large-scale benchmark for audio classification of bird vocalizations " * 20,
    "short",
]


@pytest.fixture(scope="module")
def folder():
    folder = onnx_dir(Settings(models_path=ROOT / "data" / "models"))
    export(folder)  # built by `make install`; idempotent
    return folder


def test_fp32_matches_torch_and_int8_is_close_but_its_own(folder):
    torch_vectors = np.array(SentenceTransformerEmbedder().embed_batch(TEXTS))
    fp32 = OnnxEmbedder(folder)
    int8 = OnnxEmbedder(folder, int8=True)
    assert np.abs(np.array(fp32.embed_batch(TEXTS)) - torch_vectors).max() < 1e-4
    cosines = (np.array(int8.embed_batch(TEXTS)) * torch_vectors).sum(axis=1)
    assert 0.98 < cosines.min() and cosines.max() < 0.99999  # close, yet not the same vectors
    assert fp32.model_id == SentenceTransformerEmbedder().model_id != int8.model_id
    assert fp32.count_tokens(TEXTS[1]) > fp32.window  # counted with the real tokenizer
    assert [fp32.count_tokens(t) for t in TEXTS] == [
        SentenceTransformerEmbedder().count_tokens(t) for t in TEXTS
    ]


def test_a_search_with_the_onnx_embedder_never_imports_torch(folder, seed_dir):
    script = (
        "import sys\n"
        "from rag.answer.pipeline import Pipeline\n"
        "from rag.settings import Settings\n"
        f"s = Settings(data_dir={str(seed_dir)!r}, models_path={str(ROOT / 'data' / 'models')!r}, embed_backend='auto')\n"
        "r = Pipeline(s).search('Time-MoE pretraining data size', 3)\n"
        "print(r[0].paper.title)\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-2000:]
    title, imported = run.stdout.strip().splitlines()[-2:]
    assert "Time-MoE" in title
    assert imported == "False False"


def test_auto_takes_the_backend_measured_faster_here(folder):
    from rag.index.embedding.choice import measure

    record = measure(folder, threads=2, rounds=1)
    rates = record["texts_per_s"]
    assert set(rates) == set(record["batch_size"]) == {"onnx", "onnx-int8"} and min(rates.values()) > 0
    assert record["backend"] == max(rates, key=lambda name: (rates[name], name == "onnx-int8"))
