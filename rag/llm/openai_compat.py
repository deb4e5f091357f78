"""Any OpenAI-compatible chat server (vLLM, llama.cpp server, LM Studio, Ollama's /v1),
spoken to with plain HTTP + server-sent events."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx

from rag.llm.base import LLM, LLMError, Message


class OpenAICompatLLM(LLM):
    backend = "openai"

    def __init__(self, base_url: str, model: str, *, api_key: str = "none", timeout: float = 120):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"}
        self.timeout = timeout

    def models(self) -> list[str]:
        try:
            r = httpx.get(f"{self.base_url}/models", headers=self.headers, timeout=5)
            r.raise_for_status()
            return [m["id"] for m in r.json().get("data", [])]
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise LLMError(
                f"The OpenAI-compatible server at {self.base_url} is not reachable: {exc}"
            ) from exc

    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
        }
        if grammar:  # llama.cpp's server reads it; other servers ignore an unknown field
            body["grammar"] = grammar
        try:
            with httpx.stream(
                "POST",
                f"{self.base_url}/chat/completions",
                json=body,
                headers=self.headers,
                timeout=httpx.Timeout(self.timeout, connect=5),
            ) as r:
                if r.status_code >= 400:
                    r.read()
                    raise LLMError(f"The LLM server answered {r.status_code}: {r.text[:200]}")
                for line in r.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return
                    choices = json.loads(data).get("choices") or [{}]
                    piece = (choices[0].get("delta") or {}).get("content")
                    if piece:
                        yield piece
        except httpx.TimeoutException as exc:
            raise LLMError(f"The LLM server at {self.base_url} timed out; is it overloaded?") from exc
        except httpx.HTTPError as exc:
            raise LLMError(
                f"Cannot reach the LLM server at {self.base_url} ({exc}); start it or set "
                "RAG_OPENAI_BASE_URL."
            ) from exc
