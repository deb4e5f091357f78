"""Ingest and search at N synthetic abstracts. Each size runs in its own process
(`python -m bench.scale N OUT.json`) so its peak memory is its own."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.corpus import write
from eval.metrics import percentiles
from rag.answer.pipeline import Pipeline
from rag.index.chunking import chunk_text, embedding_text
from rag.index.embedding import embedder_from_settings
from rag.index.ingest import ingest
from rag.index.readers import read_paths
from rag.index.sentence_vectors import sentence_vectors_from_settings
from rag.index.store import store_from_settings
from rag.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
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


SLICE = 5_000  # papers per ingest call: a killed run resumes at the first slice not recorded
SERVER_AT = 10_000  # the size at which search is also measured through a `chroma run` server


def corpus_texts(n: int) -> list[str]:
    """Abstracts of the synthetic corpus (throughput comparisons)."""
    from bench.corpus import generate

    return [p["abstract"] for p in generate(n, seed=1)[0]]


def disk_mb(folder: Path) -> float:
    """MiB of the files under `folder`."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _slices(n: int, work: Path) -> tuple[list[Path], Path, list]:
    """The corpus in slices (written once), the 1% that arrives later, and the planted questions."""
    corpus = work / "corpus"
    planted_file = corpus / "planted.json"
    if not planted_file.exists():
        corpus.mkdir(parents=True, exist_ok=True)
        path, planted = write(int(n * 1.01), corpus)
        lines = path.read_text().splitlines(keepends=True)
        for i in range(0, n, SLICE):
            (corpus / f"slice-{i // SLICE:03d}.jsonl").write_text("".join(lines[i : min(n, i + SLICE)]))
        # The first N papers are the corpus; the last 1% arrive later, for the incremental re-ingest.
        (corpus / "later.jsonl").write_text("".join(lines[n:]))
        path.unlink()
        keep = [p.__dict__ for p in planted if int(p.paper_id.split("-")[1]) < n]
        planted_file.write_text(json.dumps(keep))
    from bench.corpus import Planted

    planted = [Planted(**p) for p in json.loads(planted_file.read_text())]
    return sorted(corpus.glob("slice-*.jsonl")), corpus / "later.jsonl", planted


def measure(n: int, work: Path) -> dict:
    """Ingest N papers slice by slice, recording each slice in progress.json (a later run picks up
    where a killed one stopped), then re-ingest +1% and search."""
    slices, later, planted = _slices(n, work)
    settings = Settings(data_dir=work / "data", models_path=ROOT / "data" / "models")
    embedder = embedder_from_settings(settings)
    embedder.embed("warm up")
    store = store_from_settings(settings, embedder)
    sentences = sentence_vectors_from_settings(settings, embedder)  # as `citewise ingest` keeps them
    progress_file = work / "progress.json"
    progress = json.loads(progress_file.read_text()) if progress_file.exists() else {"slices": {}}
    for path in slices:
        if path.name in progress["slices"]:
            continue
        _forget(store, path)
        done = ingest([path], store, embedder, chunk_tokens=settings.chunk_tokens, sentences=sentences)
        progress["slices"][path.name] = {"seconds": done.seconds, "embed_s": done.embed_seconds,
                                         "chunks": done.chunks_embedded, "rss_mb": _rss_mb(),
                                         "at": time.strftime("%Y-%m-%d %H:%M")}  # fmt: skip
        progress_file.write_text(json.dumps(progress, indent=1))
        print(f"scale {n}: {len(progress['slices'])}/{len(slices)} slices", flush=True)
    done_slices = progress["slices"].values()
    ingest_s = sum(x["seconds"] for x in done_slices)
    chunks = sum(x["chunks"] for x in done_slices)
    _forget(store, later)  # a repeated measurement starts from the N papers again
    store.drop_keyword_index()  # timed whole on every run, not just brought in step
    t0 = time.perf_counter()
    store.keyword_index()
    keyword_build = time.perf_counter() - t0
    again = ingest([*slices, later], store, embedder, chunk_tokens=settings.chunk_tokens, sentences=sentences)

    texts = embedding_texts(read_paths([slices[0]]).papers[:RAW_SAMPLE], settings.chunk_tokens, embedder)
    texts = texts[:RAW_SAMPLE]
    t0 = time.perf_counter()
    embedder.embed_batch(texts)
    raw_rate = len(texts) / (time.perf_counter() - t0)

    pipeline = Pipeline(settings, store=store, embedder=embedder)
    t0 = time.perf_counter()
    pipeline.search("warm up", 5)  # the keyword index follows the +1 % first
    keyword_follow = time.perf_counter() - t0
    times, hits = _searches(pipeline, planted)
    result = {
        "n": n,
        "embedder": embedder.model_id,
        "chunks": chunks,
        "ingest_s": ingest_s,
        "embed_s": sum(x["embed_s"] for x in done_slices),
        "papers_per_s": n / ingest_s,
        "chunks_per_s": chunks / ingest_s,
        "raw_chunks_per_s": raw_rate,
        "raw_sample": len(texts),
        "peak_rss_mb": max(max(x["rss_mb"] for x in done_slices), _rss_mb()),
        "peak_rss_ingest_mb": max(x["rss_mb"] for x in done_slices),
        "peak_rss_search_mb": _rss_mb(),  # this process: keyword sync, re-ingest, searches
        "sessions": len({x["at"][:13] for x in done_slices}),
        "reingest_new": again.papers_new,
        "reingest_s": again.seconds,
        "reingest_embedded": again.chunks_embedded,
        "keyword_build_s": keyword_build,
        "keyword_follow_s": keyword_follow,
        "search_p50_ms": percentiles(times)["p50"] * 1000,
        "search_p95_ms": percentiles(times)["p95"] * 1000,
        "hit@5": hits / len(planted),
        "queries": len(planted),
        "disk_mb": disk_mb(work / "data"),
    }
    if n == SERVER_AT:
        result |= _server_search(settings, embedder, planted)
    return result


def _forget(store, path: Path) -> None:
    """Drop what the store holds of the papers in `path`: what a killed run stored of a slice
    whose time was never recorded (so the slice is timed whole), or the +1 % of an earlier
    measurement (so the re-ingest adds it again)."""
    if not store.exists():
        return
    ids = [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]
    stored = [pid for start in range(0, len(ids), 500) for pid in store.papers(ids[start : start + 500])]
    if stored:
        col = store.open_for_write()
        for pid in stored:
            store.delete_paper(col, pid)
        store.close_write(col)


def _searches(pipeline: Pipeline, planted: list) -> tuple[list[float], int]:
    times, hits = [], 0
    for p in planted * 2:  # each planted question twice: 100 timed searches
        t0 = time.perf_counter()
        results = pipeline.search(p.question, 5)
        times.append(time.perf_counter() - t0)
        hits += any(r.paper.id == p.paper_id for r in results)
    return times, hits // 2


def _server_search(settings: Settings, embedder, planted: list) -> dict:
    """The same index served by `chroma run` on a loopback port, searched over HTTP."""
    import socket

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    chroma = Path(sys.executable).with_name("chroma")
    proc = subprocess.Popen([str(chroma), "run", "--path", str(settings.chroma_dir), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(240):
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        remote = settings.model_copy(update={"chroma_url": url})
        pipeline = Pipeline(remote, store=store_from_settings(remote, embedder), embedder=embedder)
        pipeline.search("warm up", 5)
        times, hits = _searches(pipeline, planted)
        return {"server_search_p50_ms": percentiles(times)["p50"] * 1000,
                "server_search_p95_ms": percentiles(times)["p95"] * 1000, "server_hit@5": hits / len(planted)}  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def run_size(n: int) -> dict:
    """Measure one size in a child process (its peak memory is its own); the work folder under
    data/bench/ persists, so an interrupted size resumes and a finished one is not run again."""
    work = ROOT / "data" / "bench" / f"scale-{n}"
    out = work / "result.json"
    if not out.exists():
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "bench.scale", str(n), str(out)], check=True)
    return json.loads(out.read_text())


def bench_scale(sizes: list[int], plot_dir: Path | None) -> list[str]:
    rows = [run_size(n) for n in sizes]
    lines = [
        "## Scale: synthetic corpora (`bench/corpus.py`: seed sentences recombined, 80-350 words, 50 planted facts)",
        "",
        f"Ingest runs in slices of {SLICE:,} papers recorded in `data/bench/scale-N/progress.json`, so a "
        "size can take several sessions (column *sessions*: the distinct hours its slices finished in); "
        f"ingest time is the sum over slices. Raw = the embedder's own `embed_batch` on the first "
        f"{RAW_SAMPLE} chunks of the same corpus; ratio = pipeline chunks/s over raw chunks/s. Re-ingest "
        "adds 1% new papers to the same file set. Search: each planted question twice (100 searches).",
        "",
        "| N | embedder | chunks | ingest | papers/s | chunks/s | raw chunks/s | ratio | peak RSS | index on disk | "
        "re-ingest +1% | search p50 | search p95 | hit@5 (planted) | sessions |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {r.get('embedder', 'all-MiniLM-L6-v2')} | {r['chunks']:,} | {r['ingest_s']:.0f} s | "
            f"{r['papers_per_s']:.1f} | {r['chunks_per_s']:.1f} | {r['raw_chunks_per_s']:.1f} | "
            f"{r['chunks_per_s'] / r['raw_chunks_per_s']:.2f} | {r['peak_rss_mb']:.0f} MB | {r['disk_mb']:.0f} MB | "
            f"{r['reingest_s']:.1f} s ({r['reingest_new']} new, {r['reingest_embedded']} chunks) | "
            f"{r['search_p50_ms']:.0f} ms | {r['search_p95_ms']:.0f} ms | {r['hit@5']:.2f} ({r['queries']} q) | "
            f"{r.get('sessions', 1)} |"
        )
    lines += [
        "",
        "Keyword index (SQLite beside Chroma, `rag/keyword.py`): built whole from the stored chunks, then "
        "brought in step after the +1 % re-ingest (the first search after it pays this).",
    ]
    lines += [f"- {r['n']:,}: built in {r['keyword_build_s']:.1f} s, followed the +1 % in {r['keyword_follow_s']:.1f} s"
              for r in rows if "keyword_build_s" in r]  # fmt: skip
    served = [r for r in rows if "server_search_p50_ms" in r]
    for r in served:
        lines += ["", f"Through a `chroma run` server at {r['n']:,} papers (same index, HTTP on loopback): search "
                  f"p50 {r['server_search_p50_ms']:.0f} ms, p95 {r['server_search_p95_ms']:.0f} ms, planted hit@5 "
                  f"{r['server_hit@5']:.2f}."]  # fmt: skip
    if len(rows) >= 2:
        big, ref = rows[-1], next((r for r in rows if r["n"] == SERVER_AT), rows[-2])
        lines += [
            "",
            f"Peak RSS at {big['n']:,} / at {ref['n']:,}: {big['peak_rss_mb'] / ref['peak_rss_mb']:.2f}.",
        ]
        if "peak_rss_search_mb" in big and "peak_rss_search_mb" in ref:
            lines[-1] += (
                f" While ingesting: {big['peak_rss_ingest_mb']:.0f} MB / {ref['peak_rss_ingest_mb']:.0f} MB "
                f"(slices of earlier runs, recorded per slice); keyword sync, re-ingest and search in one process: "
                f"{big['peak_rss_search_mb']:.0f} MB / {ref['peak_rss_search_mb']:.0f} MB."
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
    result = measure(size, target.parent)
    target.write_text(json.dumps(result))
