"""One draft for two configurations (`citewise eval --share-drafts`).

At temperature 0 the model's reply is a function of its prompt, so two configurations that send
the same prompt (the selector and the rule chain it replaced: same retrieval, evidence and
prompt, different post-processing) get the same draft. Generating it once and replaying it for the
second halves the cost of measuring both in one run; the second configuration's latencies are then
not measurements (its first token is instant) and are reported for the first one only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

from rag.llm.base import LLM, Message


class SharedDrafts(LLM):
    """The live model, with each deterministic reply kept by its prompt and replayed when asked again."""

    def __init__(self, live: LLM):
        self.live = live
        self.backend, self.model = live.backend, live.model
        self.kept: dict[str, str] = {}
        self.replayed = 0

    def __getattr__(self, name: str):  # reused_tokens, count_tokens' tokenizer, ...
        return getattr(self.live, name)

    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        key = hashlib.sha256(json.dumps([messages, max_tokens, grammar], sort_keys=True).encode()).hexdigest()
        if temperature == 0.0 and key in self.kept:
            self.replayed += 1
            yield self.kept[key]
            return
        parts = []
        for piece in self.live.stream(
            messages, max_tokens=max_tokens, temperature=temperature, grammar=grammar
        ):
            parts.append(piece)
            yield piece
        if temperature == 0.0:
            self.kept[key] = "".join(parts)

    def count_tokens(self, text: str) -> int:
        return self.live.count_tokens(text)

    def close(self) -> None:
        self.live.close()
