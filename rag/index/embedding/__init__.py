"""Embedders (one interface, like llm/): the local sentence-transformers model on torch, or the same
MiniLM on onnxruntime (fp32 or int8); `embedder_from_settings` picks and caches one per process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rag.index.embedding.base import Embedder, default_model_path
from rag.index.embedding.sentence_transformer import SentenceTransformerEmbedder

if TYPE_CHECKING:
    from rag.settings import Settings

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "default_model_path",
    "embedder_from_settings",
    "onnx_dir",
]

_CACHE: dict[tuple[str, int, str], Embedder] = {}


def embedder_from_settings(settings: Settings) -> Embedder:
    """One loaded model per process, path and backend: loading costs seconds and ~100 MB."""
    key = (str(settings.embed_model or ""), settings.threads, settings.embed_backend)
    if key not in _CACHE:
        if settings.embed_backend == "torch" or settings.embed_model:
            _CACHE[key] = SentenceTransformerEmbedder(
                settings.embed_model, threads=settings.threads, batch_size=settings.embed_batch_size or 32
            )
        else:
            from rag.index.embedding.choice import chosen
            from rag.index.embedding.onnx import OnnxEmbedder, export

            export(onnx_dir(settings))  # built once from the shipped weights (make install does it)
            backend, record = settings.embed_backend, chosen(onnx_dir(settings), settings.threads)
            backend = record["backend"] if backend == "auto" else backend
            _CACHE[key] = OnnxEmbedder(
                onnx_dir(settings),
                int8=backend == "onnx-int8",
                threads=settings.threads,
                batch_size=settings.embed_batch_size or record["batch_size"][backend],
            )
    return _CACHE[key]


def onnx_dir(settings: Settings) -> Path:
    return settings.models_dir / "all-MiniLM-L6-v2-onnx"
