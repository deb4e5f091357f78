"""Ollama through its official Python client."""

from __future__ import annotations

from collections.abc import Iterator

from rag.llm.base import LLM, LLMError, Message


class OllamaLLM(LLM):
    backend = "ollama"

    def __init__(self, host: str, model: str, *, timeout: float = 120):
        import ollama

        self.host, self.model = host, model
        self.client = ollama.Client(host=host, timeout=timeout)

    def models(self) -> list[str]:
        """Models pulled on the server; raises LLMError when it is not reachable."""
        try:
            listing = self.client.list()
        except Exception as exc:
            raise LLMError(
                f"Ollama is not reachable at {self.host}: {exc}. Start it with `ollama serve`."
            ) from exc
        return [m.model for m in listing.models if m.model]

    def available(self) -> bool:
        try:
            names = self.models()
        except LLMError:
            return False
        return any(n == self.model or n.split(":")[0] == self.model for n in names)

    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        import ollama

        try:
            for part in self.client.chat(
                model=self.model,
                messages=messages,
                stream=True,
                options={"num_predict": max_tokens, "temperature": temperature},
            ):
                piece = part.message.content
                if piece:
                    yield piece
        except ollama.ResponseError as exc:
            hint = f" Run `ollama pull {self.model}`." if exc.status_code == 404 else ""
            raise LLMError(f"Ollama error: {exc.error}.{hint}") from exc
        except Exception as exc:  # connection refused, timeouts (httpx under the hood)
            raise LLMError(f"Ollama at {self.host} failed: {exc}. Is `ollama serve` running?") from exc
