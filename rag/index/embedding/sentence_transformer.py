"""sentence-transformers on torch, loaded from a local directory."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from rag.index.embedding.base import Embedder, default_model_path


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
