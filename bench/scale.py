"""Ingest and search at N synthetic abstracts. Each size runs in its own process
(`python -m bench.scale N OUT.json`) so its peak memory is its own."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import write
from eval.metrics import percentiles
from rag.answer import Pipeline
from rag.chunking import chunk_text, embedding_text
from rag.embedding import SentenceTransformerEmbedder
from rag.ingest import ingest
from rag.readers import read_paths
from rag.settings import Settings
from rag.store import store_from_settings

RAW_SAMPLE = 1000  # chunks encoded raw to measure the encoder's own throughput


def embedding_texts(papers, chunk_tokens: int, embedder) -> list[str]:
    """The texts ingest embeds for `papers`: title + chunk, chunked as ingest does."""
    return [
        embedding_text(p.title, c)
        for p in papers
        for c in chunk_text(
            p.id,
            p.abstract,
            max_tokens=chunk_tokens,
            count_tokens=embedder.count_tokens,
            reserved_tokens=embedder.count_tokens(p.title) + 3 if p.title else 0,
        )  # fmt: skip
    ]


def measure(n: int, work: Path) -> dict:
    corpus = work / "corpus"
    path, planted = write(int(n * 1.01), corpus)
    # The first N papers are the corpus; the last 1% arrive later, for the incremental re-ingest.
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:n]))
    later = corpus / "later.jsonl"
    later.write_text("".join(lines[n:]))
    planted = [p for p in planted if int(p.paper_id.split("-")[1]) < n]

    settings = Settings(data_dir=work / "data")
    embedder = SentenceTransformerEmbedder(threads=settings.torch_threads)
    embedder.embed("warm up")
    store = store_from_settings(settings, embedder)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    first = ingest([path], store, embedder, chunk_tokens=settings.chunk_tokens)
    rss_ingest = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    again = ingest([path, later], store, embedder, chunk_tokens=settings.chunk_tokens)

    papers = read_paths([path]).papers[:RAW_SAMPLE]
    texts = [
        embedding_text(p.title, c)
        for p in papers
        for c in chunk_text(
            p.id,
            p.abstract,
            max_tokens=settings.chunk_tokens,
            count_tokens=embedder.count_tokens,
            reserved_tokens=embedder.count_tokens(p.title) + 3,
        )  # fmt: skip
    ][:RAW_SAMPLE]
    t0 = time.perf_counter()
    embedder.model.encode(texts, batch_size=settings.embed_batch_size, normalize_embeddings=True)
    raw_rate = len(texts) / (time.perf_counter() - t0)

    pipeline = Pipeline(settings, store=store, embedder=embedder)
    t0 = time.perf_counter()
    pipeline.search("warm up", 5)  # loads the keyword index
    keyword_load = time.perf_counter() - t0
    times, hits = [], 0
    for p in planted:
        t0 = time.perf_counter()
        results = pipeline.search(p.question, 5)
        times.append(time.perf_counter() - t0)
        hits += any(r.paper.id == p.paper_id for r in results)
    return {
        "n": n,
        "chunks": first.chunks_embedded,
        "ingest_s": first.seconds,
        "embed_s": first.embed_seconds,
        "papers_per_s": n / first.seconds,
        "chunks_per_s": first.chunks_embedded / first.seconds,
        "raw_chunks_per_s": raw_rate,
        "raw_sample": len(texts),
        "peak_rss_mb": rss_ingest / 1024,
        "rss_before_ingest_mb": rss_before / 1024,
        "reingest_new": again.papers_new,
        "reingest_s": again.seconds,
        "reingest_embedded": again.chunks_embedded,
        "keyword_load_s": keyword_load,
        "search_p50_ms": percentiles(times)["p50"] * 1000,
        "search_p95_ms": percentiles(times)["p95"] * 1000,
        "hit@5": hits / len(planted),
        "queries": len(planted),
        "disk_mb": sum(f.stat().st_size for f in (work / "data").rglob("*") if f.is_file()) / 2**20,
    }


def run_size(n: int) -> dict:
    """Measure one size in a child process; returns its numbers."""
    with tempfile.TemporaryDirectory(prefix=f"citewise-scale-{n}-") as tmp:
        out = Path(tmp) / "result.json"
        subprocess.run([sys.executable, "-m", "bench.scale", str(n), str(out)], check=True)
        return json.loads(out.read_text())


def _extrapolate(rows: list[dict], n: int) -> dict:
    """Linear in N through the two largest measured sizes (ingest time, search latency, memory)."""
    a, b = rows[-2], rows[-1]

    def line(key: str) -> float:
        slope = (b[key] - a[key]) / (b["n"] - a["n"])
        return b[key] + slope * (n - b["n"])

    chunks = b["chunks"] / b["n"] * n
    ingest_s = chunks / b["chunks_per_s"]
    return {"n": n, "chunks": chunks, "ingest_s": ingest_s, "papers_per_s": n / ingest_s,
            "chunks_per_s": b["chunks_per_s"], "search_p50_ms": line("search_p50_ms"),
            "peak_rss_mb": line("peak_rss_mb"),
            "disk_mb": line("disk_mb")}  # fmt: skip


def bench_scale(sizes: list[int], plot_dir: Path | None) -> list[str]:
    rows = [run_size(n) for n in sizes]
    lines = [
        "## Scale: synthetic corpora (`bench/corpus.py`: seed sentences recombined, 80-350 words, 50 planted facts)",
        "",
        f"Raw = `SentenceTransformer.encode` of the first {RAW_SAMPLE} chunks of the same corpus, in the same "
        "process; ratio = pipeline chunks/s over raw chunks/s. Re-ingest adds 1% new papers to the same file set.",
        "",
        "| N | chunks | ingest | papers/s | chunks/s | raw chunks/s | ratio | peak RSS | index on disk | "
        "re-ingest +1% | search p50 | search p95 | hit@5 (planted) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {r['chunks']:,} | {r['ingest_s']:.0f} s | {r['papers_per_s']:.1f} | {r['chunks_per_s']:.1f} | "
            f"{r['raw_chunks_per_s']:.1f} | {r['chunks_per_s'] / r['raw_chunks_per_s']:.2f} | {r['peak_rss_mb']:.0f} MB | "
            f"{r['disk_mb']:.0f} MB | {r['reingest_s']:.1f} s ({r['reingest_new']} new, {r['reingest_embedded']} chunks) | "
            f"{r['search_p50_ms']:.0f} ms | {r['search_p95_ms']:.0f} ms | {r['hit@5']:.2f} ({r['queries']} q) |"
        )
    if len(rows) >= 2 and rows[-1]["n"] < 100_000:
        e = _extrapolate(rows, 100_000)
        lines.append(
            f"| 100,000 (extrapolated, not run) | ~{e['chunks']:,.0f} | ~{e['ingest_s'] / 60:.0f} min | "
            f"{e['papers_per_s']:.1f} | {e['chunks_per_s']:.1f} | | | ~{e['peak_rss_mb']:.0f} MB | ~{e['disk_mb']:.0f} MB | | "
            f"~{e['search_p50_ms']:.0f} ms | | |"
        )
    lines.append("")
    if plot_dir is not None and len(rows) >= 2:
        lines += _plots(rows, plot_dir)
    return lines


def _plots(rows: list[dict], plot_dir: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = [r["n"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    a.plot(ns, [r["chunks_per_s"] for r in rows], "o-", label="pipeline")
    a.plot(ns, [r["raw_chunks_per_s"] for r in rows], "s--", label="raw encode")
    a.set(xscale="log", xlabel="papers", ylabel="chunks/s", title="Ingest throughput", ylim=(0, None))
    a.legend()
    b.plot(ns, [r["search_p50_ms"] for r in rows], "o-", label="p50")
    b.plot(ns, [r["search_p95_ms"] for r in rows], "s--", label="p95")
    b.set(xscale="log", xlabel="papers", ylabel="ms", title="Search latency", ylim=(0, None))
    b.legend()
    fig.tight_layout()
    fig.savefig(plot_dir / "scaling.png", dpi=110)
    plt.close(fig)
    return ["![ingest and search vs corpus size](scaling.png)", ""]


if __name__ == "__main__":
    size, target = int(sys.argv[1]), Path(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="citewise-scale-work-") as tmp:
        result = measure(size, Path(tmp))
    target.write_text(json.dumps(result))
