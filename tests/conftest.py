from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rag.answer.pipeline import Pipeline
from rag.index.ingest import ingest
from rag.index.store import Store
from rag.settings import Settings, TrustSettings
from tests.fakes import FakeEmbedder, FakeLLM

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
# Tests index into temporary data folders; the models `make install` built live in ./data/models.
os.environ.setdefault("RAG_MODELS_PATH", str(ROOT / "data" / "models"))

PAPERS = [
    {
        "id": "p-entropy",
        "title": "Knowledge Entropy Decay",
        "url": "https://example.org/entropy",
        "abstract": "We study knowledge entropy during pretraining. Knowledge entropy declines steadily "
        "as pretraining advances. Lower entropy impairs knowledge acquisition and retention.",
    },
    {
        "id": "p-moe",
        "title": "MoE Routers as Embeddings",
        "abstract": "Mixture-of-experts routers carry semantic signals. Routing weights serve as embeddings "
        "without finetuning. The method improves embedding benchmarks by 10.5 percent.",
    },
    {
        "id": "p-graph",
        "title": "Graph Transformers at Scale",
        "abstract": "Graph transformers struggle with large graphs. We propose sparse attention over "
        "neighbourhoods. It scales to graphs with 100 million nodes.",
    },
]


def pytest_addoption(parser):
    parser.addoption(
        "--screenshot", action="store_true", help="Rewrite docs/screenshot.png from the browser test."
    )


def pytest_collection_modifyitems(items):
    """Everything under tests/integration/ uses real models, servers or a browser."""
    for item in items:
        if "integration" in item.path.parts:
            item.add_marker(pytest.mark.integration)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    write_jsonl(folder / "papers_a.jsonl", PAPERS)
    return folder


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def store(tmp_path, embedder) -> Store:
    return Store(tmp_path / "chroma", fingerprint={"embedder": embedder.model_id, "chunk_tokens": 60})


@pytest.fixture
def indexed(store, embedder, corpus) -> Store:
    ingest([corpus], store, embedder, chunk_tokens=60)
    return store


def make_pipeline(store: Store, embedder: FakeEmbedder, replies=(), **settings) -> tuple[Pipeline, FakeLLM]:
    llm = FakeLLM(replies)
    trust = {"support_threshold": 0.3}
    trust |= {k: settings.pop(k) for k in list(settings) if k in TrustSettings.model_fields}
    # The answer judge is real weights: logic tests run without it unless they ask for it
    # (tests/test_answer_judge.py and the integration tests run it).
    # So are the question reader and the survey's membership judge (tests/test_reader.py runs them).
    survey = {"reader": False, "judge": False} | settings.pop("survey", {})
    # Logic tests of the checks run without the answer judge, whose signals the selector reads:
    # at threshold 0 it shows whatever the sentence decision kept, and refuses when nothing is
    # (tests/test_selector.py tests the decision itself).
    opts = {
        "select": {"threshold": 0.0},
        "data_dir": store.chroma_dir.parent,
        "trust": trust,
        "evidence_judge": False,
        "survey": survey,
        **settings,
    }
    return Pipeline(Settings(**opts), store=store, embedder=embedder, llm=llm), llm
