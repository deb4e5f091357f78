"""Fakes for fast unit tests of logic: a deterministic embedder and an LLM with queued replies.
The real model, store and LLM are covered in tests/integration."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterator, Sequence

from rag.answer.audit import is_audit
from rag.index.embedding import Embedder
from rag.llm.base import LLM, LLMError, Message


class FakeEmbedder(Embedder):
    """Bag of hashed (crudely stemmed) words: texts sharing words are similar, deterministically."""

    model_id = "fake-embedder"
    dims = 256

    def __init__(self):
        self.calls = 0
        self.texts_embedded = 0
        self.seen: list[str] = []  # every text embedded, in order

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts_embedded += len(texts)
        self.seen += texts
        out = []
        for text in texts:
            vec = [0.0] * self.dims
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                word = word[:6]
                vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out


class FakeLLM(LLM):
    """Replies from a queue, streamed word by word; remembers every prompt it was sent."""

    backend = "fake"
    model = "fake-llm"

    def __init__(
        self,
        replies: Sequence[str | Exception] = (),
        verdict: Callable[[str], str] = lambda statement: "SUPPORTED",
    ):
        self.replies = list(replies)
        # The `verdict` stage's question about one statement (held to a label by a grammar):
        # `verdict` labels it; answered apart from the queue.
        self.verdict = verdict
        self.verdict_prompts: list[list[Message]] = []
        self.prompts: list[list[Message]] = []

    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        if grammar is not None and is_audit(messages):
            self.verdict_prompts.append(messages)
            statement = re.findall(r'support this statement\? "(.*)"', messages[-1]["content"])[-1]
            yield self.verdict(statement)
            return
        self.prompts.append(messages)
        if not self.replies:
            raise AssertionError("FakeLLM was called but no reply is queued")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        for i, word in enumerate(reply.split(" ")):
            yield word if i == 0 else " " + word


class BrokenLLM(LLM):
    backend = "broken"
    model = "none"

    def stream(self, messages, **kwargs):
        raise LLMError("Ollama is not reachable at http://127.0.0.1:1; start it with `ollama serve`.")
        yield ""  # pragma: no cover
