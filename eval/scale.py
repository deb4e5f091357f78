"""`citewise eval --distractors N`: the gold set against the seed papers among N distractors.

For each N, an index of the project's seed papers plus the first N distractor abstracts
(`eval/distractors.py`) is built once under `<data_dir>/distractors-v3/n<N>/` and reused (ingest is
incremental, so a second run only checks hashes). N = 0 is the index the pipeline already has.
The report gets a section with every metric against N, the items that changed between the
smallest and the largest N, and a plot.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.distractors import generate
from eval.distractors import write as write_corpus
from eval.gold import DEFAULT_GOLD, GoldItem, load_gold
from rag.answer.pipeline import Pipeline
from rag.index.ingest import dedupe, ingest
from rag.index.readers import read_paths
from rag.index.sentence_vectors import sentence_vectors_from_settings
from rag.index.store import StaleIndexError, store_from_settings

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
SEED = 0  # the distractor corpus's random seed: one corpus, reused by every run
# v2 since round 19 (no twins of a seed paper), v3 since round 22 (no seed title copied): a new
# folder each time, so no run reuses an older corpus or index
FOLDER = "distractors-v3"
SCALE = ["hit@5", "mrr", "fact_recall", "citation_precision", "citation_gold_share", "refused_unanswerable",
         "refused_answerable", "prompt_tokens", "first_token_p50", "retrieval_p50"]  # fmt: skip


def corpus(
    n: int, base: Pipeline, items: Sequence[GoldItem], folder: Path, size: int = 0
) -> tuple[Path, dict[str, Any]]:
    """The first `n` distractors as a JSONL file, and the checks' findings for the whole corpus.
    A corpus generated earlier for at least `n` papers is reused: its first n are the n. A new
    corpus gets max(n, size) papers, so one generation serves every N of a run."""
    folder.mkdir(parents=True, exist_ok=True)
    made = sorted(
        (int(p.stem.rsplit("-", 1)[1]), p)
        for p in folder.glob(f"corpus-s{SEED}-*.jsonl")
        if p.stem[-1].isdigit()
    )
    source = next((p for size, p in made if size >= n), None)
    if source is None:
        papers, _ = dedupe(read_paths([SEEDS]).papers)
        # Every gold item's facts, whichever split this run evaluates: one corpus serves both.
        everything = [*items, *load_gold([DEFAULT_GOLD])]
        facts = [v for item in everything for fact in item.facts for v in fact]
        size = max(n, size)
        records, stats = generate(size, papers, base.embedder, facts, seed=SEED)
        source = folder / f"corpus-s{SEED}-{size}.jsonl"
        write_corpus(source, records, stats)
    stats = json.loads(source.with_suffix(".stats.json").read_text())
    target = folder / f"n{n}" / "distractors.jsonl"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(source, encoding="utf-8") as src:
            lines = [next(src) for _ in range(n)]
        tmp = target.with_suffix(".tmp")
        tmp.write_text("".join(lines), encoding="utf-8")
        tmp.replace(target)
    return target, stats


def pipeline_with(
    n: int, base: Pipeline, items: Sequence[GoldItem], size: int = 0, progress=None
) -> tuple[Pipeline, dict]:
    """A pipeline over the seeds plus `n` distractors (from a corpus of at least `size`), sharing
    the base's embedder and model."""
    if n == 0:
        return base, {}
    folder = base.settings.data_dir / FOLDER
    path, stats = corpus(n, base, items, folder, size)
    settings = base.settings.model_copy(update={"data_dir": path.parent, "chroma_url": None})
    store = store_from_settings(settings, base.embedder)

    def build(rebuild: bool):
        return ingest([SEEDS, path], store, base.embedder, chunk_tokens=settings.chunk_tokens,
                      rebuild=rebuild, progress=progress,
                      sentences=sentence_vectors_from_settings(settings, base.embedder))  # fmt: skip

    try:
        summary = build(False)
    except StaleIndexError:  # built with another embedder or chunking: this index is ours to redo
        summary = build(True)
    stats = stats | {"index_papers": summary.papers, "ingest_s": round(summary.seconds, 1)}
    return Pipeline(settings, store=store, embedder=base.embedder, llm=base._llm), stats


def changed(results: Sequence[Any], low: int, high: int) -> dict[str, list[str]]:
    """Items whose outcome differs between N = low and N = high (same config): gold papers lost
    from the top 5, and unanswerable items refused at low but answered at high."""
    at = {(r.config.split(" N=")[0], r.distractors, r.id): r for r in results}
    lost, leaked = [], []
    for (config, n, item), r in at.items():
        if n != low or (config, high, item) not in at:
            continue
        other = at[(config, high, item)]
        if r.scores.get("hit@5") == 1.0 and other.scores.get("hit@5") == 0.0:
            lost.append(f"{config}: {item}")
        if r.type == "unanswerable" and r.abstained and other.answered and not other.abstained:
            leaked.append(f"{config}: {item}")
    return {"lost_from_top5": lost, "unanswerable_answered": leaked}


def paired_first_token(results: Sequence[Any], low: int, high: int) -> dict[str, dict[str, float]]:
    """Per config, the median over items of first token at N=high / at N=low, on the items that
    generated at both. First tokens here fall in two clusters (about 3.8 s and 5.7 s on test,
    by prompt length), so a few items changing cluster move the p50 of the whole run by 1.5 s
    while the typical item is not slower: the paired ratio shows which happened."""
    at = {(r.config.split(" N=")[0], r.distractors, r.id): r.latency.get("first_token") for r in results}
    ratios: dict[str, list[float]] = {}
    for (config, n, item), first in at.items():
        other = at.get((config, high, item))
        if n == low and first and other:
            ratios.setdefault(config, []).append(other / first)
    return {c: {"items": len(v), "median_ratio": statistics.median(v)} for c, v in ratios.items()}


def section(summary: dict[str, Any]) -> list[str]:
    """The report's distractor section: every metric against N, and what changed."""
    from eval.tables import table

    scale = summary.get("distractors")
    if not scale:
        return []
    lines = ["## Against distractors (seed papers among N other abstracts)", ""]
    lines += table({name: summary["configs"][name] for name in scale["configs"]}, SCALE)
    lines += ["", f"Distractor corpus checks: `{json.dumps(scale['corpus'])}`", ""]
    for key, items in (scale["changed"] if scale["low"] != scale["high"] else {}).items():
        lines.append(f"- {key.replace('_', ' ')} (N={scale['low']} -> N={scale['high']}): "
                     f"{len(items)}" + (f" ({', '.join(items)})" if items else ""))  # fmt: skip
    for config, paired in (scale.get("first_token_paired") or {}).items():
        lines.append(f"- {config}: first token at N={scale['high']} / at N={scale['low']}, median over the "
                     f"{paired['items']} items that generated at both: {paired['median_ratio']:.3f}")  # fmt: skip
    return lines + [""]


def plot(summary: dict[str, Any], out: Path) -> list[str]:
    scale = summary.get("distractors")
    if not scale:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    configs = scale["configs"]
    base_names = list(dict.fromkeys(c.split(" N=")[0] for c in configs))
    for base_name in base_names:
        points = sorted((int(c.split(" N=")[1]), c) for c in configs if c.startswith(base_name + " N="))
        xs = [max(n, 1) for n, _ in points]  # log axis: N = 0 drawn at 1
        for key in ("hit@5", "fact_recall", "citation_precision", "refused_unanswerable"):
            ys = [summary["configs"][c].get(key) for _, c in points]
            if any(y is not None for y in ys):
                ax.plot(xs, [y or 0.0 for y in ys], marker="o", label=f"{base_name}: {key}")
    ax.set_xscale("log")
    ax.set_xlabel("distractor abstracts in the index (0 drawn at 1)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Quality against index size")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "distractors.png", dpi=110)
    plt.close(fig)
    return ["distractors.png"]


def scale_summary(results: Sequence[Any], corpus_stats: dict[str, Any]) -> dict[str, Any] | None:
    sizes = sorted({r.distractors for r in results if r.distractors is not None})
    if not sizes:
        return None
    return {
        "configs": list(dict.fromkeys(r.config for r in results if r.distractors is not None)),
        "low": sizes[0],
        "high": sizes[-1],
        "changed": changed(results, sizes[0], sizes[-1]),
        "first_token_paired": paired_first_token(results, sizes[0], sizes[-1]),
        "corpus": corpus_stats,
    }
