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


BATCHES = (8, 16, 32)  # texts per onnxruntime call: short texts ran faster in smaller batches here


def measure(folder: Path, threads: int, rounds: int = 3) -> dict:
    """Texts/s of the fp32 and int8 files at each batch size on TEXTS, alternating rounds so load
    hits all alike; returns the record kept in CHOICE: the faster backend, each backend's best
    batch size and rate, and the CPU."""
    from rag.index.embedding.onnx import OnnxEmbedder

    found = {
        (name, batch): OnnxEmbedder(folder, int8=name == "onnx-int8", threads=threads, batch_size=batch)
        for name in ("onnx", "onnx-int8")
        for batch in BATCHES
    }
    rates: dict[tuple[str, int], list[float]] = {key: [] for key in found}
    for embedder in found.values():
        embedder.embed_batch(TEXTS[:16])  # load and warm outside the timings
    for _ in range(rounds):
        for key, embedder in found.items():
            t0 = time.perf_counter()
            embedder.embed_batch(TEXTS)
            rates[key].append(len(TEXTS) / (time.perf_counter() - t0))
    median = {key: statistics.median(r) for key, r in rates.items()}
    best = {name: max(BATCHES, key=lambda b, n=name: median[(n, b)]) for name in ("onnx", "onnx-int8")}
    speed = {name: round(median[(name, b)], 1) for name, b in best.items()}
    # int8 keeps ties: its file is a quarter of the size and its vectors are as good for retrieval.
    backend = "onnx-int8" if speed["onnx-int8"] >= speed["onnx"] else "onnx"
    return {
        "backend": backend,
        "batch_size": best,
        "texts_per_s": speed,
        "cpu": cpu_model(),
        "threads": threads,
    }


def keep(folder: Path, threads: int) -> dict:
    """Measure (see `measure`) and keep the record beside the ONNX files; a read-only folder only
    loses the keeping (measured again next time)."""
    record = measure(folder, threads)
    try:
        (folder / CHOICE).write_text(json.dumps(record, indent=1))
    except OSError:
        pass
    return record


def chosen(folder: Path, threads: int) -> dict:
    """The kept record, measured and kept first when there is none (seconds)."""
    try:
        record = json.loads((folder / CHOICE).read_text())
        if record["backend"] in record["batch_size"]:
            return record
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return keep(folder, threads)
