"""The real llama.cpp path (SmolLM2: fast), the OpenAI-compatible backend against a real
llama_cpp.server on loopback, and Ollama when a server is reachable."""

import sys

import pytest

from rag.answer.pipeline import Pipeline
from rag.llm import llm_from_settings
from rag.llm.models import shipped_model_path
from rag.llm.ollama import OllamaLLM
from rag.llm.openai_compat import OpenAICompatLLM
from tests.integration.conftest import free_port, running

QUESTION = "How does knowledge entropy change during language model pretraining?"


def test_embedded_llamacpp_answers_with_offered_citations_only(seed_settings):
    settings = seed_settings.model_copy(update={"model": "smollm2", "llm_backend": "llamacpp"})
    answer = Pipeline(settings).ask(QUESTION)
    assert answer.backend == "llamacpp" and "SmolLM2" in answer.model
    assert answer.retrieved[0].paper.id == "eHehzSDUFp"
    assert answer.text.strip()
    offered = {r.paper.id for r in answer.retrieved}
    assert all(c.paper_id in offered for c in answer.citations)
    assert answer.prompt_tokens and answer.prompt_tokens > 100
    if not answer.abstained:
        assert answer.timings.first_token is not None


@pytest.fixture(scope="module")
def llama_server(seed_settings):
    model = shipped_model_path("smollm2", seed_settings.models_dir)
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
    ]
    base = f"http://127.0.0.1:{port}/v1"
    with running(cmd, f"{base}/models"):
        yield base


def test_openai_compatible_backend_against_a_real_server(seed_settings, llama_server):
    llm = OpenAICompatLLM(llama_server, "smollm2")
    assert llm.models()
    pieces = list(llm.stream([{"role": "user", "content": "Say hi."}], max_tokens=8))
    assert len(pieces) >= 1 and "".join(pieces).strip()
    settings = seed_settings.model_copy(update={"llm_backend": "openai", "openai_base_url": llama_server})
    answer = Pipeline(settings).ask(QUESTION)
    assert answer.backend == "openai" and answer.text and not answer.error


def test_openai_backend_down_gives_a_clear_error(seed_settings):
    settings = seed_settings.model_copy(
        update={"llm_backend": "openai", "openai_base_url": f"http://127.0.0.1:{free_port()}/v1"}
    )
    answer = Pipeline(settings).ask(QUESTION)
    assert "Cannot reach the LLM server" in answer.error
    assert answer.retrieved[0].paper.id == "eHehzSDUFp"


def _ollama_reachable(settings) -> bool:
    return OllamaLLM(settings.ollama_host, settings.ollama_model).available()


def test_auto_falls_back_to_embedded_when_ollama_is_absent(seed_settings):
    settings = seed_settings.model_copy(
        update={"ollama_host": f"http://127.0.0.1:{free_port()}", "model": "smollm2"}
    )
    assert llm_from_settings(settings, "auto").backend == "llamacpp"


def test_ollama_backend(seed_settings):
    if not _ollama_reachable(seed_settings):
        pytest.skip(f"no Ollama server with {seed_settings.ollama_model} at {seed_settings.ollama_host}")
    answer = Pipeline(seed_settings.model_copy(update={"llm_backend": "ollama"})).ask(QUESTION)
    assert answer.backend == "ollama" and answer.citations
