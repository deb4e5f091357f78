"""The embedded backend: llama-cpp-python runs a GGUF in this process, with the chat template
stored in the GGUF, one generation at a time."""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

from rag.llm.base import LLM, LLMError, Message

log = logging.getLogger(__name__)


_LOADED: weakref.WeakSet[LlamaCppLLM] = weakref.WeakSet()


@atexit.register
def _close_loaded() -> None:
    for llm in list(_LOADED):
        llm.close()


class LlamaCppLLM(LLM):
    backend = "llamacpp"

    def __init__(self, model_path: Path, *, n_threads: int = 2, n_ctx: int = 2048):
        self.path = Path(model_path)
        if not self.path.exists():
            raise LLMError(f"Model file not found: {self.path} (set RAG_LLAMACPP_MODEL or RAG_MODEL)")
        self.model = self.path.stem
        self.n_threads, self.n_ctx = n_threads, n_ctx
        self._llama = None
        self._load_lock = threading.Lock()
        _LOADED.add(self)
        # llama.cpp contexts are not thread-safe, and on 2 cores two generations would only
        # slow each other down: queue them.
        self.lock = threading.Lock()

    @property
    def llama(self):
        with self._load_lock:
            if self._llama is None:
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise LLMError("llama-cpp-python is not installed: run `make install`.") from exc
                try:
                    # chat_format=None: llama-cpp-python uses the template stored in the GGUF.
                    self._llama = Llama(
                        model_path=str(self.path),
                        n_ctx=self.n_ctx,
                        n_threads=self.n_threads,
                        n_threads_batch=self.n_threads,
                        verbose=False,
                    )
                except Exception as exc:
                    raise LLMError(f"Cannot load the model {self.path}: {exc}") from exc
        return self._llama

    def close(self) -> None:
        """Free the model now: left to the garbage collector at interpreter exit, llama.cpp's
        destructor runs after its library is unloaded and prints a traceback."""
        with self._load_lock, self.lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def stream(
        self, messages: list[Message], *, max_tokens: int = 256, temperature: float = 0.1
    ) -> Iterator[str]:
        llama = self.llama
        with self.lock:
            try:
                chunks = llama.create_chat_completion(
                    messages=messages,  # type: ignore[arg-type]
                    max_tokens=max_tokens,
                    temperature=temperature,
                    repeat_penalty=1.1,
                    stream=True,
                )
                for chunk in chunks:
                    piece = chunk["choices"][0]["delta"].get("content")  # type: ignore[index]
                    if piece:
                        yield piece
            except ValueError as exc:  # e.g. the prompt exceeds the context window
                raise LLMError(f"The embedded model failed: {exc}") from exc
