"""`citewise eval` end to end: load and check gold, run each config, write the report."""

from __future__ import annotations

import json
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
from eval.runner import ItemResult, System, make_system, run_item
from rag.answer.pipeline import Pipeline

BLOCK = 4  # items a run scores before the next run takes over (see `interleaved`)


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
    resume: bool = False,
    fixed_order: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """Run the configs over the gold items and write the report to `out`. Each scored item is
    appended to `out/progress.jsonl` at once; with `resume`, items already there are kept, not run
    again (a long run stopped midway goes on where it stopped)."""
    names = list(configs) or DEFAULT_CONFIGS
    chosen = [get_config(n) for n in names]  # unknown names fail before any work
    items = [
        i
        for i in load_checked(gold, pipeline)
        if (not types or i.type in types) and (only is None or i.id in only)
    ]
    items = items[:limit]
    started = time.perf_counter()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out = out or Path("reports") / stamp
    done = _progress_so_far(out) if resume else {}
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "progress.jsonl", "a" if resume else "w", encoding="utf-8")
    corpus: dict[str, Any] = {}
    runs: list[tuple[str, System, bool, int | None]] = []  # label, system, answer, N: report order
    for n in distractors or [None]:
        target = pipeline
        if n is not None:
            from eval.scale import pipeline_with

            target, stats = pipeline_with(n, pipeline, items, size=max(distractors))
            corpus |= stats
        for config in chosen:
            label = config.name if n is None else f"{config.name} N={n}"
            answer = not retrieval_only and not (not configs and config.name in DEFAULT_RETRIEVAL_ONLY)
            runs.append((label, make_system(config, target, ablation), answer, n))
    scored = dict(done)
    try:
        for (label, system, answer, n), item in progress(
            interleaved(runs, items, done, not fixed_order), "eval"
        ):
            r = run_item(system, label, item, answer)
            r.distractors = n
            log.write(json.dumps(r.to_json()) + "\n")
            log.flush()
            scored[label, item.id] = r
    finally:  # what was scored stays on disk, whatever stopped the run
        log.close()
    results = [scored[label, i.id] for label, *_ in runs for i in items]
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
        "resumed": len(done),
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
                "support_threshold",
                "answer_k",
                "fusion",
                "context_tokens",
                "chunk_tokens",
            )
        },
    }
    return out, write_report(out, results, meta)


def interleaved(
    runs: Sequence[tuple], items: Sequence[GoldItem], done=frozenset(), flip: bool = True
) -> list[tuple]:
    """(run, item) pairs still to score, in blocks of BLOCK items: every run scores a block before
    the next block starts, and the runs' order flips from block to block. Run one after the other,
    a 2-hour evaluation on a shared host drifts by +-15 % between its first and last hour, which
    alone moves a first-token ratio between index sizes past a 10 % target; interleaved, both sizes
    see the same host. Blocks, not single items: the same question asked twice in a row would find
    its own prompt's prefix in the model's cache and time a warm prefill. Not flipped (`flip`
    false) when the first run's drafts are shared with the second (`--share-drafts`): the first
    run generates, and its latencies are the measured ones."""
    starts = list(range(0, len(items), BLOCK))
    if len(starts) > 1 and len(items) - starts[-1] < 2:  # a one-item block would repeat its question
        starts.pop()
    order = []
    for b, (start, end) in enumerate(zip(starts, [*starts[1:], len(items)])):
        for run in runs if b % 2 == 0 or not flip else runs[::-1]:
            order += [(run, i) for i in items[start:end] if (run[0], i.id) not in done]
    return order


def _progress_so_far(out: Path) -> dict[tuple[str, str], ItemResult]:
    """The items a stopped run already scored, by (config label, item id)."""
    path = out / "progress.jsonl"
    if not path.is_file():
        return {}
    done = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            r = ItemResult(**json.loads(line))
        except (ValueError, TypeError):
            continue  # a line cut short when the run was stopped
        done[r.config, r.id] = r
    return done


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
