"""Searches share one retriever: concurrent calls with different `k` must not see each other's."""

from concurrent.futures import ThreadPoolExecutor

from rag.index.ingest import ingest
from rag.index.store import Store
from tests.conftest import make_pipeline, write_jsonl

TOPICS = [
    "entropy",
    "routers",
    "graphs",
    "tokens",
    "sparsity",
    "kernels",
    "speech",
    "birds",
    "proofs",
    "robots",
]


def test_eight_threads_with_different_k_get_what_sequential_calls_get(tmp_path, embedder):
    rows = [
        {"id": f"p{i}", "title": f"Paper {i}", "abstract": f"We study {TOPICS[i % 10]} and {TOPICS[(i * 3) % 10]} "
         f"in model number {i}. Results on {TOPICS[(i * 7) % 10]} improve."}
        for i in range(60)
    ]  # fmt: skip
    folder = tmp_path / "c"
    folder.mkdir()
    write_jsonl(folder / "p.jsonl", rows)
    store = Store(tmp_path / "chroma", fingerprint={"embedder": embedder.model_id, "chunk_tokens": 60})
    ingest([folder], store, embedder, chunk_tokens=60)
    pipeline, _ = make_pipeline(store, embedder)
    calls = [
        (f"{TOPICS[i % 10]} and {TOPICS[(i + 4) % 10]} results", k) for i in range(8) for k in (1, 3, 8, 20)
    ]
    expected = [[r.paper.id for r in pipeline.search(q, k)] for q, k in calls]
    assert len({len(e) for e in expected}) > 1  # k changes the answer
    for _ in range(3):
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda c: [r.paper.id for r in pipeline.search(*c)], calls))
        assert got == expected
