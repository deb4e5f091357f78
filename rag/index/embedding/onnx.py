"""MiniLM on onnxruntime: the same vectors as the torch model without importing torch (a cold
`citewise search` spends most of its time importing torch and sentence-transformers), and an int8
variant for faster ingest.

`export()` writes `model.onnx` (fp32) and `model-int8.onnx` (dynamically quantized) from the shipped
weights, once, at install time (`citewise models embedder`); nothing is downloaded. The pipeline is
the one sentence-transformers runs for all-MiniLM-L6-v2: BERT, mean pooling over the attention
mask, L2 normalization, 256 word pieces at most.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

from rag.index.embedding.base import Embedder, default_model_path

FP32, INT8 = "model.onnx", "model-int8.onnx"


class OnnxEmbedder(Embedder):
    def __init__(self, folder: Path, *, int8: bool = False, threads: int = 2, batch_size: int = 32):
        self.folder = Path(folder)
        self.file = self.folder / (INT8 if int8 else FP32)
        if not self.file.exists():
            raise RuntimeError(
                f"The ONNX embedder is not built ({self.file} is missing): run `citewise models embedder`."
            )
        # fp32 gives the torch model's vectors (to ~1e-6), so it shares its id and its indexes;
        # int8 vectors differ and must not be mixed with them.
        self.model_id = "all-MiniLM-L6-v2" + ("-int8" if int8 else "")
        self.threads, self.batch_size = threads, batch_size
        self.window = json.loads((self.folder / "window.json").read_text())["max_seq_length"]
        self._session = None
        self._tokenizer = None
        self._counter = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
                tokenizer.enable_truncation(self.window)
                tokenizer.enable_padding()
                self._tokenizer = tokenizer
                self._session = ort.InferenceSession(
                    str(self.file), options, providers=["CPUExecutionProvider"]
                )
        return self._session, self._tokenizer

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        if not texts:
            return []
        session, tokenizer = self._load()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding per batch
        out: list = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encoded = tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            for i, vector in zip(batch, pooled):
                out[i] = vector.tolist()
        return out

    def _count(self):
        if self._counter is None:
            from tokenizers import Tokenizer

            counter = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            # The file carries truncation and padding settings of its own: a count needs neither.
            counter.no_truncation()
            counter.no_padding()
            self._counter = counter
        return self._counter

    def count_tokens(self, text: str) -> int:
        """Word pieces of the whole text (the embedding tokenizer truncates at the window)."""
        return len(self._count().encode(text, add_special_tokens=False).ids)

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._count().encode_batch(list(texts), add_special_tokens=False)]


def export(folder: Path, source: Path | None = None) -> list[Path]:
    """Build the fp32 and int8 ONNX files from the shipped weights (idempotent)."""
    folder.mkdir(parents=True, exist_ok=True)
    fp32, int8 = folder / FP32, folder / INT8
    if fp32.exists() and int8.exists():
        return [fp32, int8]
    import shutil

    import torch
    from sentence_transformers import SentenceTransformer

    source = source or default_model_path()
    model = SentenceTransformer(str(source), device="cpu")
    bert = model[0].auto_model.eval()
    shutil.copy(source / "tokenizer.json", folder / "tokenizer.json")
    (folder / "window.json").write_text(json.dumps({"max_seq_length": int(model.max_seq_length)}))

    class Hidden(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    example = torch.ones(1, 8, dtype=torch.long)
    tmp = fp32.with_suffix(".tmp.onnx")
    import logging
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on the ops it traces and rewrites
        torch.onnx.export(
            Hidden(bert),
            (example, example, torch.zeros_like(example)),
            str(tmp),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                n: {0: "batch", 1: "tokens"} for n in ("input_ids", "attention_mask", "token_type_ids")
            }
            | {"last_hidden_state": {0: "batch", 1: "tokens"}},
            opset_version=17,
            dynamo=False,
        )
    tmp.replace(fp32)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = int8.with_suffix(".tmp.onnx")
    # Per output channel: one scale per row keeps cosine to the fp32 vectors > 0.99 (per tensor: 0.92).
    logging.disable(logging.WARNING)  # its advice to pre-process the graph goes to the root logger
    try:
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        logging.disable(logging.NOTSET)
    tmp.replace(int8)
    return [fp32, int8]
