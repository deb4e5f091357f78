"""The embedded backend: llama-cpp-python runs a GGUF in this process, with the chat template
stored in the GGUF, one generation at a time."""

from __future__ import annotations

import atexit
import functools
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rag.llm.base import LLM, LLMError, Message

log = logging.getLogger(__name__)


_LOADED: weakref.WeakSet[LlamaCppLLM] = weakref.WeakSet()


@atexit.register
def _close_loaded() -> None:
    for llm in list(_LOADED):
        llm.close()


MAX_CONTEXTS = 2  # the answer prompt and the judge prompt


@functools.lru_cache(maxsize=32)
def _grammar(gbnf: str | None):
    """A GBNF grammar parsed once (an answer's verdict grammar differs only by its line count)."""
    if gbnf is None:
        return None
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(gbnf, verbose=False)


class LlamaCppLLM(LLM):
    """One llama.cpp context per system prompt (at most MAX_CONTEXTS, least recently used
    closed first). llama.cpp reuses the longest prefix a context has already evaluated; with one
    context, the judge's short prompt between two answers replaced the answer's system prompt, which
    was then evaluated again for every question. The weights are memory-mapped, so a second context
    costs its KV cache and buffers, not another copy of the model."""

    backend = "llamacpp"

    def __init__(self, model_path: Path, *, n_threads: int = 2, n_ctx: int = 2048):
        self.path = Path(model_path)
        if not self.path.exists():
            raise LLMError(
                f"Model file not found: {self.path} (set RAG_MODEL to a shipped model or a .gguf path)"
            )
        self.model = self.path.stem
        self.n_threads, self.n_ctx = n_threads, n_ctx
        self._contexts: OrderedDict[str, Any] = OrderedDict()
        self._load_lock = threading.Lock()
        _LOADED.add(self)
        # llama.cpp contexts are not thread-safe, and on 2 cores two generations would only
        # slow each other down: queue them.
        self.lock = threading.Lock()
        self.reused_tokens: int | None = None  # prompt tokens the last call took from the cache

    def _load(self):
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMError("llama-cpp-python is not installed: run `make install`.") from exc
        try:
            # chat_format=None: llama-cpp-python uses the template stored in the GGUF.
            return Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                # Measured here on 450 prompt tokens (qwen1.5b Q4_K_M, 2 threads): prefill 4.77 s
                # against 4.94 s without (docs/benchmarks.md, "Prefill options").
                flash_attn=True,
                verbose=False,
            )
        except Exception as exc:
            raise LLMError(f"Cannot load the model {self.path}: {exc}") from exc

    def context(self, system: str = ""):
        """The context that last evaluated a prompt with this system prompt (loaded on first use)."""
        with self._load_lock:
            if system not in self._contexts:
                if len(self._contexts) >= MAX_CONTEXTS:
                    _, oldest = self._contexts.popitem(last=False)
                    oldest.close()
                self._contexts[system] = self._load()
            self._contexts.move_to_end(system)
            return self._contexts[system]

    @property
    def llama(self):
        """A loaded context (for tokenizing)."""
        with self._load_lock:
            if self._contexts:
                return next(reversed(self._contexts.values()))
        return self.context()

    def close(self) -> None:
        """Free the model now: left to the garbage collector at interpreter exit, llama.cpp's
        destructor runs after its library is unloaded and prints a traceback."""
        with self._load_lock, self.lock:
            while self._contexts:
                _, llama = self._contexts.popitem()
                llama.close()

    def reset(self) -> None:
        """Forget every cached prompt (benchmarks time a cold prefill)."""
        with self._load_lock, self.lock:
            for llama in self._contexts.values():
                llama.reset()

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        llama = self.context(system)
        with self.lock:
            before = list(llama._input_ids)  # what the context holds from its last prompt
            try:
                chunks = llama.create_chat_completion(
                    messages=messages,  # type: ignore[arg-type]
                    max_tokens=max_tokens,
                    temperature=temperature,
                    repeat_penalty=1.1,
                    stream=True,
                    grammar=_grammar(grammar),
                )
                for i, chunk in enumerate(chunks):
                    if i == 0:  # the prompt is evaluated: the shared prefix is what was reused
                        self.reused_tokens = llama.longest_token_prefix(before, list(llama._input_ids))
                    piece = chunk["choices"][0]["delta"].get("content")  # type: ignore[index]
                    if piece:
                        yield piece
            except ValueError as exc:  # e.g. the prompt exceeds the context window
                raise LLMError(f"The embedded model failed: {exc}") from exc
