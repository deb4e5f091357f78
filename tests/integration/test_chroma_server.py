"""The same index code against a real Chroma server (`chroma run`) on a loopback port."""

import shutil
import sys
from pathlib import Path

import pytest

from rag.answer import Pipeline
from rag.embedding import embedder_from_settings
from rag.ingest import ingest
from rag.settings import Settings
from rag.store import store_from_settings
from tests.conftest import SEEDS
from tests.integration.conftest import free_port, running


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory):
    chroma = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    url = f"http://127.0.0.1:{port}"
    cmd = [chroma, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)]
    with running(cmd, f"{url}/api/v2/heartbeat", timeout=60):
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
    from rag.store import StoreError

    settings = Settings(data_dir=tmp_path, chroma_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(StoreError, match="Cannot open the Chroma index"):
        store_from_settings(settings, embedder_from_settings(settings)).stats()
