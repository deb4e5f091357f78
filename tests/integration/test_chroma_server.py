"""The same index code against a real Chroma server (`chroma run`) on a loopback port."""

import shutil
import sys
from pathlib import Path

import pytest

from rag.answer.pipeline import Pipeline
from rag.index.embedding import embedder_from_settings
from rag.index.ingest import ingest
from rag.index.store import store_from_settings
from rag.settings import Settings
from tests.conftest import SEEDS
from tests.integration.conftest import free_port, running


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory):
    chroma = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    url = f"http://127.0.0.1:{port}"
    cmd = [chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)]
    with running(cmd, f"{url}/api/v2/heartbeat", timeout=240):
        yield url


def test_ingest_and_search_against_a_chroma_server(tmp_path, chroma_url):
    settings = Settings(data_dir=tmp_path, chroma_url=chroma_url)
    embedder = embedder_from_settings(settings)
    store = store_from_settings(settings, embedder)
    summary = ingest([SEEDS], store, embedder, chunk_tokens=settings.chunk_tokens)
    assert (summary.papers, summary.duplicates_merged) == (53, 4)
    assert not (tmp_path / "chroma").exists()  # the vectors live on the server
    # the keyword index is local, derived from the server's chunks
    results = Pipeline(settings).search("Compressing LLM weights below one bit per parameter", 3)
    assert results[0].paper.id == "6XUSDvBFkV"
    assert store.keyword_index().size == store.count()
    again = ingest([SEEDS], store, embedder, chunk_tokens=settings.chunk_tokens)
    assert again.chunks_embedded == 0


def test_chroma_server_down_is_a_clear_error(tmp_path):
    from rag.index.store import StoreError

    settings = Settings(data_dir=tmp_path, chroma_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(StoreError, match="Cannot open the Chroma index"):
        store_from_settings(settings, embedder_from_settings(settings)).stats()


def test_filters_hold_against_a_chroma_server(tmp_path, chroma_url):
    from rag.filters import parse

    settings = Settings(data_dir=tmp_path, chroma_url=chroma_url, collection="filtered")
    pipeline = Pipeline(settings)
    store = store_from_settings(settings, pipeline.embedder)
    ingest([SEEDS], store, pipeline.embedder, chunk_tokens=settings.chunk_tokens)
    status = {
        p.id: p.status
        for p in pipeline.store.papers(
            [m["paper_id"] for _, m, _ in store.iter_chunks(include_documents=False)]
        ).values()
    }
    assert sorted(set(status.values())) == ["oral", "poster", "spotlight"]
    for query in [
        "language model pretraining data",
        "low-rank adaptation",
        "mixture of experts",
        "bird sounds",
    ]:
        for wanted in (["status=oral"], ["status=spotlight", "status=oral"]):
            filters = parse(wanted)
            results = pipeline.search(query, 5, filters=filters)
            assert results and all(status[r.paper.id] in filters["status"] for r in results)
    assert set(store.facets()["status"]) == {"oral", "poster", "spotlight"}
