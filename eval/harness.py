"""`citewise eval` end to end: load and check gold, run each config, write the report."""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from eval.configs import DEFAULT_CONFIGS, DEFAULT_RETRIEVAL_ONLY, get_config
from eval.gold import DEFAULT_GOLD, GoldItem, load_gold
from eval.report import write_report
from eval.runner import ItemResult, run_config
from rag.answer import Pipeline


def indexed_paper_ids(pipeline: Pipeline) -> set[str]:
    return {meta["paper_id"] for _, meta, _ in pipeline.store.iter_chunks(include_documents=False)}


def load_checked(gold: Sequence[Path], pipeline: Pipeline) -> list[GoldItem]:
    """Gold items whose paper ids all exist in the index (raises `GoldError` otherwise)."""
    return load_gold(gold or [DEFAULT_GOLD], indexed_paper_ids(pipeline))


def evaluate(
    pipeline: Pipeline,
    *,
    gold: Sequence[Path] = (),
    configs: Sequence[str] = (),
    limit: int | None = None,
    types: Sequence[str] = (),
    retrieval_only: bool = False,
    out: Path | None = None,
    ablation: bool = False,
    only: set[str] | None = None,
    progress=lambda items, _: items,
    command: str = "",
    distractors: Sequence[int] = (),
) -> tuple[Path, dict[str, Any]]:
    names = list(configs) or DEFAULT_CONFIGS
    chosen = [get_config(n) for n in names]  # unknown names fail before any work
    items = [
        i
        for i in load_checked(gold, pipeline)
        if (not types or i.type in types) and (only is None or i.id in only)
    ]
    items = items[:limit]
    started = time.perf_counter()
    results: list[ItemResult] = []
    corpus: dict[str, Any] = {}
    for n in distractors or [None]:
        target = pipeline
        if n is not None:
            from eval.scale import pipeline_with

            target, stats = pipeline_with(n, pipeline, items, size=max(distractors))
            corpus |= stats
        for config in chosen:
            answer = not retrieval_only and not (not configs and config.name in DEFAULT_RETRIEVAL_ONLY)
            run = run_config(config, items, target, answer=answer, ablation=ablation, progress=progress)
            if n is not None:
                for r in run:
                    r.config, r.distractors = f"{r.config} N={n}", n
            results += run
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out = out or Path("reports") / stamp
    meta = {
        "created": stamp,
        "gold": ", ".join(str(g) for g in gold)
        or str(DEFAULT_GOLD.relative_to(Path(__file__).parent.parent)),
        "n_items": len(items),
        "mode": ("retrieval only" if retrieval_only else "retrieval + answers")
        + (" + ablation (every item drafted)" if ablation else ""),
        "command": command or "citewise eval " + " ".join(sys.argv[2:]),
        "machine": f"{platform.machine()}, {_cores()} cores, Python {platform.python_version()}",
        "wall_s": time.perf_counter() - started,
        "distractor_corpus": corpus,
        "descriptions": {
            c.name: c.description
            + (" (retrieval only)" if not configs and c.name in DEFAULT_RETRIEVAL_ONLY else "")
            for c in chosen
        },
        "settings": {
            k: str(v)
            for k, v in pipeline.settings.model_dump().items()
            if k
            in (
                "model",
                "llm_backend",
                "min_relevance",
                "support_threshold",
                "answer_k",
                "fusion",
                "context_tokens",
                "chunk_tokens",
            )
        },
    }
    return out, write_report(out, results, meta)


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
