"""LLM backends behind one interface, chosen by settings (`RAG_LLM_BACKEND`)."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rag.llm.base import LLM, LLMError, Message

if TYPE_CHECKING:
    from rag.settings import Settings

__all__ = ["LLM", "LLMError", "Message", "llm_from_settings"]

log = logging.getLogger(__name__)
_CACHE: dict[tuple, LLM] = {}
_LOCK = threading.Lock()


def _embedded(settings: Settings) -> LLM:
    from rag.llm.llamacpp import LlamaCppLLM
    from rag.llm.models import shipped_model_path

    gguf = settings.model.endswith(".gguf")
    path = Path(settings.model) if gguf else shipped_model_path(settings.model, settings.models_dir)
    key = ("llamacpp", str(path), settings.threads, settings.llm_context)
    if key not in _CACHE:  # one loaded model per process: it holds ~1-2 GB
        _CACHE[key] = LlamaCppLLM(path, n_threads=settings.threads, n_ctx=settings.llm_context)
    return _CACHE[key]


def llm_from_settings(settings: Settings, backend: str | None = None) -> LLM:
    backend = backend or settings.llm_backend
    with _LOCK:
        if backend == "llamacpp":
            return _embedded(settings)
        if backend == "openai":
            from rag.llm.openai_compat import OpenAICompatLLM

            return OpenAICompatLLM(
                settings.openai_base_url,
                settings.openai_model,
                api_key=os.environ.get("OPENAI_API_KEY", "none"),
                timeout=settings.llm_timeout,
            )
        from rag.llm.ollama import OllamaLLM

        ollama = OllamaLLM(settings.ollama_host, settings.ollama_model, timeout=settings.llm_timeout)
        if backend == "ollama":
            return ollama
        if backend != "auto":
            raise LLMError(f"Unknown LLM backend '{backend}' (auto, ollama, llamacpp, openai)")
        if ollama.available():
            log.info("LLM: Ollama at %s with %s", settings.ollama_host, settings.ollama_model)
            return ollama
        log.info(
            "LLM: no Ollama with %s at %s; using the embedded llama.cpp model",
            settings.ollama_model,
            settings.ollama_host,
        )
        return _embedded(settings)
