"""The embedder backends side by side: throughput on the same texts (alternating, so load on the
machine hits each alike) and retrieval on the whole gold set with an index built by each."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from rag.index.embedding import Embedder, SentenceTransformerEmbedder, onnx_dir
from rag.index.embedding.onnx import OnnxEmbedder, export
from rag.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ("torch", "onnx", "onnx-int8")


def embedders(settings: Settings) -> dict[str, Embedder]:
    folder = onnx_dir(settings)
    export(folder)
    return {
        "torch": SentenceTransformerEmbedder(threads=settings.threads),
        "onnx": OnnxEmbedder(folder, threads=settings.threads),
        "onnx-int8": OnnxEmbedder(folder, int8=True, threads=settings.threads),
    }


def throughput(found: dict[str, Embedder], texts: list[str], rounds: int = 3) -> dict[str, float]:
    """Median texts/s per backend over `rounds` alternating passes over the same texts."""
    for e in found.values():
        e.embed_batch(texts[:8])  # load outside the timings
    rates: dict[str, list[float]] = {name: [] for name in found}
    for _ in range(rounds):
        for name, e in found.items():
            t0 = time.perf_counter()
            e.embed_batch(texts)
            rates[name].append(len(texts) / (time.perf_counter() - t0))
    return {name: statistics.median(r) for name, r in rates.items()}


def retrieval(backend: str, settings: Settings) -> dict[str, object]:
    """hit@5 and MRR over the whole gold set with the seeds indexed by `backend`, and the ids of
    the items with a gold paper in the top 5."""
    from eval.harness import evaluate
    from rag.answer.pipeline import Pipeline
    from rag.index.ingest import ingest
    from rag.index.store import store_from_settings

    with tempfile.TemporaryDirectory(prefix=f"citewise-{backend}-") as tmp:
        s = settings.model_copy(update={"data_dir": Path(tmp), "embed_backend": backend})
        pipeline = Pipeline(s)
        store = store_from_settings(s, pipeline.embedder)
        ingest([ROOT / "seeds"], store, pipeline.embedder, chunk_tokens=s.chunk_tokens,
               sentences=pipeline.sentence_vectors)  # fmt: skip
        folder, summary = evaluate(
            Pipeline(s, store=store, embedder=pipeline.embedder), configs=["hybrid"], retrieval_only=True,
            out=Path(tmp) / "report", command="bench",
        )  # fmt: skip
        rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    top5 = sorted(r["id"] for r in rows if r["scores"].get("hit@5") == 1.0)
    values = summary["configs"]["hybrid"]
    return {"hit@5": values["hit@5"], "mrr": values["mrr"], "top5": top5}


def bench_embedders(settings: Settings, texts: list[str]) -> list[str]:
    found = embedders(settings)
    rates = throughput(found, texts)
    scores = {name: retrieval(name, settings) for name in BACKENDS}
    base = scores["torch"]
    lines = [
        "## Embedder backends (same texts, alternating passes; retrieval on the whole gold set)",
        "",
        f"Throughput: median of 3 passes over {len(texts)} synthetic abstracts (bench/corpus.py), "
        "2 threads each. Retrieval: the seeds indexed by each backend, `citewise eval -c hybrid "
        "--retrieval-only` on all 143 gold items.",
        "",
        "| backend | abstracts/s | vs torch | hit@5 | MRR | MRR vs torch | gold items lost from the top 5 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in BACKENDS:
        s = scores[name]
        lost = sorted(set(base["top5"]) - set(s["top5"]))  # type: ignore[arg-type]
        lines.append(
            f"| {name} | {rates[name]:.1f} | {rates[name] / rates['torch']:.2f}x | {s['hit@5']:.3f} | "
            f"{s['mrr']:.3f} | {s['mrr'] - base['mrr']:+.3f} | {len(lost)}{' (' + ', '.join(lost) + ')' if lost else ''} |"  # type: ignore[operator]
        )
    return lines + [""]
