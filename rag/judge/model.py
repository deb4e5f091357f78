"""A cross-encoder citewise trained itself, run as int8 ONNX: (text, text) pairs in, class
probabilities out. The weights ship beside this file with their sha256 in `meta.json`; a file that
does not match is refused at load (a truncated copy or a checkout with LFS pointers would otherwise
score every pair as noise). Nothing is downloaded: `python -m eval.judge.train` rebuilds the files.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WEIGHTS = Path(__file__).parent / "weights"
MODEL_FILE, TOKENIZER_FILE, META_FILE = "model-int8.onnx", "tokenizer.json", "meta.json"


class JudgeLoadError(RuntimeError):
    """The judge's files are missing or are not the ones its meta.json names."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Meta:
    """What a judge's folder says of itself (meta.json)."""

    name: str
    labels: tuple[str, ...]  # the classes, in the order of the model's outputs
    max_length: int  # word pieces of a pair at most (the training length)
    sha256: str  # of the ONNX file
    sentences: int = 3  # source sentences a pair shows (the support judge's passage)

    @classmethod
    def read(cls, folder: Path) -> Meta:
        path = folder / META_FILE
        if not path.exists():
            raise JudgeLoadError(
                f"no judge in {folder}: {META_FILE} is missing (rebuild: python -m eval.judge.train)"
            )
        raw = json.loads(path.read_text())
        return cls(raw["name"], tuple(raw["labels"]), int(raw["max_length"]), raw["sha256"],
                   int(raw.get("sentences", 3)))  # fmt: skip


def verify(folder: Path, meta: Meta, rebuild: str = "python -m eval.judge.train") -> Path:
    """The ONNX file of `folder`; `JudgeLoadError` unless it is there and matches meta's sha256."""
    path = folder / MODEL_FILE
    if not path.exists():
        raise JudgeLoadError(f"the judge's weights are missing: {path}")
    found = sha256(path)
    if found != meta.sha256:
        raise JudgeLoadError(
            f"the judge's weights {path} do not match meta.json (sha256 {found[:12]}… is not "
            f"{meta.sha256[:12]}…): the file is damaged or not the trained one; "
            f"restore it from the repository or rebuild it with `{rebuild}`"
        )
    return path


class PairModel:
    """One judge's ONNX session and tokenizer, loaded on first use (a CLI that never judges pays
    nothing) and checked against its sha256."""

    def __init__(self, folder: Path, *, threads: int = 2, batch_size: int = 16):
        self.folder = Path(folder)
        self.meta = Meta.read(self.folder)
        self.threads, self.batch_size = threads, batch_size
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def verify(self) -> None:
        """Raise `JudgeLoadError` unless the ONNX file is there and matches its sha256."""
        verify(self.folder, self.meta)

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                self.verify()
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                tokenizer = Tokenizer.from_file(str(self.folder / TOKENIZER_FILE))
                # Truncate the passage, not the claim: the claim is what is judged.
                tokenizer.enable_truncation(self.meta.max_length, strategy="only_second")
                tokenizer.enable_padding()
                self._tokenizer = tokenizer
                self._session = ort.InferenceSession(
                    str(self.folder / MODEL_FILE), options, providers=["CPUExecutionProvider"]
                )
        return self._session, self._tokenizer

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax class probabilities, one row per pair, columns in `meta.labels` order."""
        if not pairs:
            return np.zeros((0, len(self.meta.labels)), dtype=np.float32)
        session, tokenizer = self._load()
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = np.zeros((len(pairs), len(self.meta.labels)), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encoded = tokenizer.encode_batch([(pairs[i][0], pairs[i][1] or "-") for i in batch])
            feeds = {
                "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
            }
            logits = session.run(None, feeds)[0].astype(np.float64)
            logits -= logits.max(axis=1, keepdims=True)
            probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
            out[batch] = probs
        return out
