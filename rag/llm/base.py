"""The LLM interface: one abstract method, `stream`, that yields text pieces."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator

from rag.text import estimate_tokens

Message = dict[str, str]


class LLMError(RuntimeError):
    """The model could not answer; the message names the fix."""


class LLM(ABC):
    backend: str = "unknown"
    model: str = "unknown"

    @abstractmethod
    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        """Yield the reply to a chat `messages` list piece by piece. `grammar` (GBNF) constrains
        the reply where the backend can (llama.cpp, embedded or as a server); others ignore it."""

    def complete(self, messages: list[Message], **kwargs) -> str:
        return "".join(self.stream(messages, **kwargs))

    def count_tokens(self, text: str) -> int:
        """Prompt tokens; backends with a tokenizer at hand count exactly."""
        return estimate_tokens(text)

    def close(self) -> None:
        """Release what the backend holds (a loaded model); servers hold nothing."""
        return None

    def describe(self) -> str:
        return f"{self.backend}:{self.model}"
