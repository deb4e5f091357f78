"""Which ONNX embedder this CPU runs faster, measured here rather than assumed.

int8 matrix kernels are 2-3x faster than fp32 on CPUs with VNNI (AVX-512 VNNI, AMX) and can be
slower than fp32 where onnxruntime falls back to generic kernels (AVX2 on 128-bit units). So
`citewise models embedder` times both on the same texts and keeps the faster one's name beside the
ONNX files; `RAG_EMBED_BACKEND=auto` (the default) reads it. The choice is kept, not re-measured on
every start: the index is stamped with the embedder that built it, and a choice that flipped with
the machine's load would make it stale."""

from __future__ import annotations

import json
import platform
import statistics
import time
from pathlib import Path

CHOICE = "choice.json"
# Sentence-length texts, as ingest embeds them; the content does not change the speed, only lengths.
_WORDS = (
    "we propose a method that learns sparse representations of language model activations and "
    "evaluate it on reasoning benchmarks where it improves accuracy while reducing the cost of "
    "inference across several model sizes and training budgets compared with strong baselines"
).split()
TEXTS = [" ".join(_WORDS[i % 7 : i % 7 + 8 + i % 29]) for i in range(192)]


def cpu_model() -> str:
    """The CPU's name as the kernel reports it (benchmarks say which CPU their numbers are from)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure(folder: Path, threads: int, rounds: int = 5) -> dict:
    """Texts/s of the fp32 and int8 files on TEXTS, alternating rounds so load hits both alike;
    returns the record kept in CHOICE (backend name, rates, CPU)."""
    from rag.index.embedding.onnx import OnnxEmbedder

    found = {
        "onnx": OnnxEmbedder(folder, threads=threads),
        "onnx-int8": OnnxEmbedder(folder, int8=True, threads=threads),
    }
    rates: dict[str, list[float]] = {name: [] for name in found}
    for embedder in found.values():
        embedder.embed_batch(TEXTS[:16])  # load and warm outside the timings
    for _ in range(rounds):
        for name, embedder in found.items():
            t0 = time.perf_counter()
            embedder.embed_batch(TEXTS)
            rates[name].append(len(TEXTS) / (time.perf_counter() - t0))
    median = {name: round(statistics.median(r), 1) for name, r in rates.items()}
    # int8 keeps ties: its file is a quarter of the size and its vectors are as good for retrieval.
    backend = "onnx-int8" if median["onnx-int8"] >= median["onnx"] else "onnx"
    return {"backend": backend, "texts_per_s": median, "cpu": cpu_model(), "threads": threads}


def chosen(folder: Path, threads: int) -> str:
    """The kept choice, measured first when there is none (a few seconds)."""
    path = folder / CHOICE
    try:
        return json.loads(path.read_text())["backend"]
    except (OSError, ValueError, KeyError):
        record = measure(folder, threads)
        try:
            path.write_text(json.dumps(record, indent=1))
        except OSError:  # a read-only models folder: measured again next time
            pass
        return record["backend"]
