"""Whole-corpus ingest against the embedder's floor on this machine.

The floor is the embedder's own time for each abstract's word pieces once, by `embed_batch` alone
(sorted by length inside it), in the cheaper of two forms: every title and abstract cut into windows
of at most the embedder's window (whole sentences, no overlap), or its sentences and title apart (as
ingest embeds them: attention over long windows costs more per word piece). Ingest cannot be faster than that, so its wall
time over the floor says what the rest of ingest (reading, chunking, storing, the per-sentence pass)
costs. The rate is measured on a sample; the floor scales it to every word piece of the corpus."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.scale import disk_mb
from rag.index.chunking import chunk_text
from rag.index.embedding import embedder_from_settings
from rag.index.embedding.choice import cpu_model
from rag.index.ingest import dedupe
from rag.index.readers import read_paths
from rag.settings import Settings
from rag.text import sentence_spans

SAMPLE = 1500  # papers whose word pieces are timed (about a minute on the faster CPU)


def _forms(papers, embedder) -> dict[str, list[str]]:
    """Two ways to embed each word piece once: whole-window chunks, or sentences and titles."""
    windows = [
        c.text
        for p in papers
        for c in chunk_text(p.id, f"{p.title}. {p.abstract}" if p.title else p.abstract,
                            max_tokens=embedder.window - 2, overlap_sentences=0,
                            count_tokens=embedder.count_tokens)
    ]  # fmt: skip
    sentences = [p.title for p in papers if p.title] + [
        p.abstract[s:e] for p in papers for s, e in sentence_spans(p.abstract)
    ]
    return {
        "windows of whole sentences up to the embedder's window": windows,
        "sentences and titles": sentences,
    }


def floor_rates(papers, embedder, sample: int = SAMPLE) -> dict[str, float]:
    """Word pieces/s of the raw embedder on `sample` papers, each word piece once, in each form."""
    chosen = random.Random(0).sample(papers, min(sample, len(papers)))
    embedder.embed_batch([p.abstract for p in chosen[:16]])  # warm
    rates = {}
    for form, texts in _forms(chosen, embedder).items():
        pieces = sum(embedder.count_tokens(t) for t in texts)
        t0 = time.perf_counter()
        embedder.embed_batch(texts)
        rates[form] = pieces / (time.perf_counter() - t0)
    return rates


def bench_floor(corpus: Path, settings: Settings) -> list[str]:
    papers, _ = dedupe(read_paths([corpus]).papers)
    embedder = embedder_from_settings(settings)
    total = sum(embedder.count_tokens(p.title) + embedder.count_tokens(p.abstract) for p in papers)
    rates = floor_rates(papers, embedder)
    floor = total / max(rates.values())  # the cheaper way to embed every word piece once
    with tempfile.TemporaryDirectory(prefix="citewise-floor-") as data:
        env = {**os.environ, "RAG_DATA_DIR": data, "RAG_MODELS_PATH": str(settings.models_dir)}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rag.cli", "ingest", str(corpus), "-q"], env=env, check=True)
        wall = time.perf_counter() - t0
        disk = disk_mb(Path(data))
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return [
        f"## Ingest of a whole corpus against the embedder's floor ({corpus.name}, {len(papers):,} papers)",
        "",
        f"CPU: {cpu_model()}, {os.cpu_count()} cores; embedder {embedder.model_id} "
        f"(`RAG_EMBED_BACKEND={settings.embed_backend}`).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| word pieces of every title and abstract | {total:,} |",
        *[
            f"| raw `embed_batch` on {min(SAMPLE, len(papers))} papers' {form} | {rate:,.0f} word pieces/s |"
            for form, rate in rates.items()
        ],
        f"| floor (every word piece embedded once, the faster form) | {floor / 60:.1f} min |",
        f"| `citewise ingest` from an empty folder | {wall / 60:.1f} min |",
        f"| ingest / floor | {wall / floor:.2f} |",
        f"| peak RSS of ingest | {rss:,.0f} MB |",
        f"| data folder after ingest | {disk:,.0f} MiB |",
        "",
    ]
