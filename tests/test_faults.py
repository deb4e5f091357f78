"""Faults a tool fed with downloaded files meets: huge files, thousands of files, files vanishing
mid-run, a locked store, LLM servers that die or stall mid-stream, corrupted model files.
Real Chroma on disk and real HTTP servers on loopback; a fake embedder for speed."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import rag.index.readers
from rag.answer.pipeline import Pipeline
from rag.index.ingest import ingest, ingest_lock
from rag.index.store import Store, StoreError
from rag.llm import LLMError
from rag.llm.models import SHIPPED, shipped_model_path
from rag.llm.ollama import OllamaLLM
from rag.llm.openai_compat import OpenAICompatLLM
from rag.settings import Settings
from tests.conftest import PAPERS, make_pipeline, write_jsonl
from ui.app import llm_choices


def consistent(store: Store) -> dict[str, int]:
    """Chroma and the keyword index agree on what is stored."""
    stats = store.stats()
    assert store.keyword_index().size == stats["chunks"] == store.count()
    return stats


@pytest.mark.slow
def test_fifty_megabyte_files_fail_alone(store, embedder, corpus):
    big = corpus / "huge.txt"
    big.write_text("word " * (10 * 2**20))  # 50 MB of one "abstract"
    lines = [json.dumps({"id": "giant", "abstract": "x " * (25 * 2**20)})]  # one 50 MB record
    lines += [
        json.dumps({"id": f"ok-{i}", "abstract": f"Small abstract number {i} about graphs."})
        for i in range(3)
    ]
    (corpus / "dump.jsonl").write_text("\n".join(lines) + "\n")
    summary = ingest([corpus], store, embedder, chunk_tokens=60)
    errors = [str(e) for e in summary.errors]
    assert any("huge.txt" in e and "over 100000" in e for e in errors), errors
    assert any("dump.jsonl:1" in e and "over 100000" in e for e in errors), errors
    assert consistent(store)["papers"] == len(PAPERS) + 3


@pytest.mark.slow
def test_thousands_of_small_files(tmp_path, store, embedder):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(2000):
        (folder / f"paper_{i:04d}.txt").write_text(f"Abstract {i}: we study topic {i % 37} with method {i}.")
    summary = ingest([folder], store, embedder, chunk_tokens=60)
    assert summary.files_read == 2000 and not summary.errors
    assert consistent(store)["papers"] == 2000


def test_file_removed_mid_run(monkeypatch, store, embedder, corpus):
    write_jsonl(corpus / "papers_b.jsonl", [{"id": "late", "abstract": "A paper that vanishes."}])
    (corpus / "notes.txt").write_text("A plain text abstract about retrieval.")
    real = rag.index.readers._READERS[".jsonl"]

    def read_and_delete(path, *args, **kwargs):
        # While the first file is read, another one disappears (a sync client, a user).
        if path.name == "papers_a.jsonl":
            (corpus / "papers_b.jsonl").unlink(missing_ok=True)
        return real(path, *args, **kwargs)

    monkeypatch.setitem(rag.index.readers._READERS, ".jsonl", read_and_delete)
    summary = ingest([corpus], store, embedder, chunk_tokens=60)
    assert any("papers_b.jsonl" in str(e) for e in summary.errors), summary.errors
    assert consistent(store)["papers"] == len(PAPERS) + 1  # papers_a and notes.txt


def test_locked_index_is_a_clear_error_and_loses_nothing(indexed, embedder, corpus):
    before = consistent(indexed)
    # Another process (a second `citewise ingest`) holds the index's write lock.
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(indexed.chroma_dir.parent)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        write_jsonl(corpus / "more.jsonl", [{"id": "new", "abstract": "Fresh results on graphs."}])
        with (
            pytest.raises(StoreError, match="Another ingest is running"),
            ingest_lock(indexed.chroma_dir.parent),
        ):
            ingest([corpus], indexed, embedder, chunk_tokens=60)
    finally:
        holder.kill()
        holder.wait()
    assert consistent(indexed) == before
    with ingest_lock(indexed.chroma_dir.parent):  # released when its holder dies
        ingest([corpus], indexed, embedder, chunk_tokens=60)
    assert consistent(indexed)["papers"] == before["papers"] + 1


LOCK_HOLDER = """
import sys, time
from pathlib import Path
from rag.index.ingest import ingest_lock
with ingest_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(60)
"""


class _Handler(BaseHTTPRequestHandler):
    """A scripted LLM server: Ollama's /api/tags and /api/chat, OpenAI's chat completions."""

    mode = "ok"

    def log_message(self, *args):  # keep test output clean
        return

    def _json(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/api/tags":
            self._json(200, {"models": [{"name": "llama3.2:3b", "model": "llama3.2:3b"}]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/api/chat":
            self._json(404, {"error": "model 'qwen2.5:1.5b-instruct' not found, try pulling it first"})
            return
        # OpenAI-compatible streaming that stalls after two pieces.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for piece in ("Knowledge entropy", " declines"):
            chunk = {"choices": [{"delta": {"content": piece}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        time.sleep(5)


@pytest.fixture
def llm_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_ollama_model_not_pulled_names_the_fix(llm_server):
    llm = OllamaLLM(llm_server, "qwen2.5:1.5b-instruct", timeout=5)
    with pytest.raises(LLMError, match="ollama pull qwen2.5:1.5b-instruct"):
        llm.complete([{"role": "user", "content": "hi"}])
    assert not llm.available()


def test_ollama_not_running_names_the_fix():
    llm = OllamaLLM("http://127.0.0.1:9", "qwen2.5:1.5b-instruct", timeout=2)
    with pytest.raises(LLMError, match="ollama serve"):
        llm.complete([{"role": "user", "content": "hi"}])


def test_settings_panel_lists_ollama_models_when_reachable(llm_server, tmp_path):
    values = [v for _, v in llm_choices(Settings(data_dir=tmp_path, ollama_host=llm_server))]
    assert "ollama:llama3.2:3b" in values and "llamacpp:qwen1.5b" in values
    down = [v for _, v in llm_choices(Settings(data_dir=tmp_path, ollama_host="http://127.0.0.1:9"))]
    assert not any(v.startswith("ollama:") for v in down)


def test_server_timeout_mid_stream_keeps_sources_and_partial_text(llm_server, indexed, embedder):
    llm = OpenAICompatLLM(f"{llm_server}/v1", "local", timeout=1)
    pipeline, _ = make_pipeline(indexed, embedder)
    pipeline = Pipeline(pipeline.settings, store=indexed, embedder=embedder, llm=llm)
    answer = pipeline.ask("How does knowledge entropy change during pretraining?")
    assert "timed out" in answer.error
    assert answer.retrieved and answer.retrieved[0].paper.id == "p-entropy"
    assert answer.text.startswith("Knowledge entropy declines")


def test_missing_and_corrupted_model_files_name_the_fix(tmp_path):
    name = "qwen0.5b"
    with pytest.raises(LLMError, match="corrupted.*citewise models"):
        (tmp_path / SHIPPED[name].filename).write_bytes(b"not a model")
        shipped_model_path(name, tmp_path)
    settings = Settings(data_dir=tmp_path, llm_backend="llamacpp", model=str(tmp_path / "gone.gguf"))
    with pytest.raises(LLMError, match="Model file not found"):
        Pipeline(settings).llm()
