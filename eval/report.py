"""Summaries, the Markdown report, PNG plots, and the comparison of two reports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval import metrics as m
from eval.runner import ItemResult
from eval.scale import plot as plot_scale
from eval.scale import scale_summary, section
from eval.tables import fmt as _fmt
from eval.tables import table

RETRIEVAL = ["hit@1", "hit@5", "recall@5", "recall@10", "mrr", "ndcg@10", "list_recall", "list_precision",
             "list_outside_filter", "list_outside_area", "list_oversized"]  # fmt: skip
ANSWER = ["facts_cited", "fact_recall", "citation_precision", "citation_gold_share", "citation_recall", "answer_words",
          "empty_slot", "prompt_tokens", "cached_tokens"]  # fmt: skip
# Graded by citewise's own checker: not comparable with the baseline, which has no checker.
SELF = ["cited_sentences", "supported_sentences", "whole_sentences", "quotes_own_paper", "select_ms"]
REFUSED = ["refused_unanswerable", "refused_answerable"]
REFUSAL = [
    "abstain_precision",
    "abstain_recall",
    "abstain_accuracy",
    "abstain_rate",
    "litqa_accuracy",
    "litqa_precision",
]
LATENCY = ["retrieval_p50", "retrieval_p95", "first_token_p50", "first_token_p95", "total_p50", "total_p95",
           "verdict_p50", "verdict_p95"]  # fmt: skip
HEADLINE = ["hit@5", "mrr", "facts_cited", "fact_recall", "citation_precision", "citation_recall", "refused_unanswerable",
            "refused_answerable", "litqa_precision", "first_token_p50", "total_p50"]  # fmt: skip
# Per-item means that get a bootstrap 95 % interval in the report.
WITH_CI = ["hit@5", "mrr", "facts_cited", "fact_recall", "citation_precision", "citation_recall", "refused_unanswerable",
           "refused_answerable"]  # fmt: skip
LOWER_IS_BETTER = {k for k in LATENCY} | {"abstain_rate", "list_outside_filter", "list_outside_area", "list_oversized", "refused_answerable", "answer_words", "empty_slot",
                                          "prompt_tokens", "select_ms"}  # fmt: skip


def summarize(results: Sequence[ItemResult]) -> dict[str, float | None]:
    """Flat metric -> value for one config's results (means over items where a metric applies)."""
    out: dict[str, float | None] = {"items": float(len(results))}
    for key in RETRIEVAL + ANSWER + SELF + REFUSED:
        out[key] = m.mean([r.scores.get(key) for r in results])
    for key in WITH_CI:
        ci = m.bootstrap_ci([r.scores.get(key) for r in results])
        out[f"{key}_ci"] = list(ci) if ci else None  # type: ignore[assignment]
    answered = [r for r in results if r.answered]
    if answered:
        out |= m.abstention_scores(
            [r.abstained for r in answered],
            [r.type != "unanswerable" for r in answered],
            [bool(r.scores.get("correct")) for r in answered],
        )
        out["errors"] = float(sum(bool(r.error) for r in answered))
    for stage in ("retrieval", "first_token", "total", "verdict"):
        p = m.percentiles([r.latency.get(stage) for r in results])
        out[f"{stage}_p50"], out[f"{stage}_p95"] = p["p50"], p["p95"]
    return out


def build_summary(results: Sequence[ItemResult], meta: dict[str, Any]) -> dict[str, Any]:
    configs = list(dict.fromkeys(r.config for r in results))
    types = list(dict.fromkeys(r.type for r in results))
    by_config = {c: [r for r in results if r.config == c] for c in configs}
    return {
        **meta,
        "configs": {c: summarize(rs) for c, rs in by_config.items()},
        "ablation": {c: ablation(rs) for c, rs in by_config.items() if any(r.variants for r in rs)},
        "by_type": {
            c: {t: summarize([r for r in rs if r.type == t]) for t in types} for c, rs in by_config.items()
        },
        "distractors": scale_summary(results, meta.get("distractor_corpus", {})),
    }


ABLATION = ["fact_recall", "citation_precision", "refused_unanswerable", "refused_answerable"]


def ablation(results: Sequence[ItemResult]) -> dict[str, dict[str, float | None]]:
    """Per check or rule switched off: the ablation metrics over the same drafts ("all on" first)."""
    names = list(dict.fromkeys(n for r in results for n in r.variants))
    rows = {"all on": {k: m.mean([r.scores.get(k) for r in results]) for k in ABLATION}}
    for name in names:
        rows[f"without {name}"] = {
            k: m.mean([r.variants[name].get(k) for r in results if name in r.variants]) for k in ABLATION
        }
    return rows


def _with_ci(vals: dict[str, Any], key: str) -> str:
    ci = vals.get(f"{key}_ci")
    return f"{_fmt(key, vals.get(key))} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else _fmt(key, vals.get(key))


def render_markdown(summary: dict[str, Any], plots: Sequence[str]) -> str:
    cfg = summary["configs"]
    lines = [
        f"# Evaluation report — {summary['created']}",
        "",
        f"Gold: `{summary['gold']}` ({summary['n_items']} items). Mode: {summary['mode']}. "
        f"Command: `{summary['command']}`. Machine: {summary['machine']}. Wall time: {summary['wall_s']:.0f} s."
        + (
            f" Resumed: {summary['resumed']} item runs were kept from the stopped run (their timings are its own)."
            if summary.get("resumed")
            else ""
        ),
        "",
        "## Side by side",
        "",
        *table(cfg, HEADLINE),
        "",
        "Configs: " + "; ".join(f"**{n}**: {d}" for n, d in summary["descriptions"].items()),
        "",
        "## With bootstrap 95 % intervals (items resampled, 2,000 rounds)",
        "",
        "| config | " + " | ".join(WITH_CI) + " |",
        "|---" * (len(WITH_CI) + 1) + "|",
        *[f"| {n} | " + " | ".join(_with_ci(v, k) for k in WITH_CI) + " |" for n, v in cfg.items()],
        "",
        "## Retrieval (paper level)",
        "",
        *table(cfg, RETRIEVAL),
        "",
    ]
    if any(v.get("fact_recall") is not None for v in cfg.values()):
        lines += ["## Answers and citations", "", *table(cfg, ANSWER + ["errors"]), ""]
        lines += ["## Refusals", "", *table(cfg, REFUSED + REFUSAL), ""]
        own = {n: v for n, v in cfg.items() if v.get("supported_sentences") is not None}
        if own:
            lines += ["## Self-checks (graded by citewise's own checker; the baseline has none)", "",
                      *table(own, SELF), ""]  # fmt: skip
    for name, rows in summary.get("ablation", {}).items():
        lines += [f"## Ablation: {name}, each check or rule off in turn (same drafts)", "",
                  *table(rows, ABLATION, first="variant"), ""]  # fmt: skip
    lines += section(summary)
    lines += ["## Latency", "", *table(cfg, LATENCY), ""]
    for name, types in summary["by_type"].items():
        keys = ["items", "hit@1", "hit@5", "mrr"] + (["fact_recall", "citation_precision", "abstain_rate",
                                                      "answer_words"]
                                                     if cfg[name].get("fact_recall") is not None else [])  # fmt: skip
        lines += [f"## By question type: {name}", "", *table(types, keys, first="type"), ""]
    lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots]
    lines += ["", "Per-item answers, citations and scores: `results.jsonl`."]
    return "\n".join(lines) + "\n"


def plot(summary: dict[str, Any], results: Sequence[ItemResult], out: Path) -> list[str]:
    """Metric bars per config, per type, and a latency histogram; returns the file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    files: list[str] = []
    cfg = summary["configs"]
    names = list(cfg)
    keys = [
        k
        for k in HEADLINE
        if not k.endswith(("_p50", "_p95")) and any(cfg[n].get(k) is not None for n in names)
    ]

    def bars(name: str, labels: list[str], values, title: str, rotate: bool) -> None:
        fig, ax = plt.subplots(figsize=(max(8, len(labels) * 1.1), 4))
        width = 0.8 / len(names)
        for i, config in enumerate(names):
            ax.bar(
                np.arange(len(labels)) + i * width,
                [values(config, x) or 0.0 for x in labels],
                width,
                label=config,
            )
        ax.set_xticks(
            np.arange(len(labels)) + 0.4 - width / 2,
            labels,
            rotation=30 if rotate else 0,
            ha="right" if rotate else "center",
        )
        ax.set_ylim(0, 1.05)
        ax.set_title(title)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        files.append(name)

    bars("metrics_by_config.png", keys, lambda c, k: cfg[c].get(k), "Metrics per config", rotate=True)
    types = list(next(iter(summary["by_type"].values())))
    key = "fact_recall" if any(cfg[n].get("fact_recall") is not None for n in names) else "hit@5"
    bars("by_type.png", types, lambda c, t: summary["by_type"][c][t].get(key),
         f"{key} per question type (none for unanswerable items)", rotate=False)  # fmt: skip

    stage = "total" if any(r.latency.get("total") for r in results) else "retrieval"
    fig, ax = plt.subplots(figsize=(8, 4))
    for name in names:
        vals = [r.latency[stage] for r in results if r.config == name and r.latency.get(stage) is not None]
        if vals:
            ax.hist(vals, bins=20, alpha=0.5, label=name)
    ax.set_xlabel(f"{stage} latency (s)")
    ax.set_ylabel("items")
    ax.set_title(f"{stage} latency per item")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)
    files.append("latency.png")
    return files


def write_report(out: Path, results: Sequence[ItemResult], meta: dict[str, Any]) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.jsonl", "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
    summary = build_summary(results, meta)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    files = plot(summary, results, out) + plot_scale(summary, out)
    (out / "report.md").write_text(render_markdown(summary, files), encoding="utf-8")
    return summary


def compare(a: Path, b: Path, tolerance: float = 0.005) -> list[str]:
    """What got better or worse from report A to report B, per config and metric."""
    sa = json.loads((a / "summary.json").read_text())["configs"]
    sb = json.loads((b / "summary.json").read_text())["configs"]
    lines = [f"{a} -> {b}"]
    for config in [c for c in sb if c in sa]:
        for key in RETRIEVAL + ANSWER + REFUSED + REFUSAL + LATENCY:
            va, vb = sa[config].get(key), sb[config].get(key)
            if va is None or vb is None or abs(vb - va) <= tolerance:
                continue
            better = (vb < va) if key in LOWER_IS_BETTER else (vb > va)
            lines.append(
                f"  {config:12} {key:20} {_fmt(key, va):>9} -> {_fmt(key, vb):>9}  {'better' if better else 'WORSE'}"
            )
    only = sorted(set(sa) ^ set(sb))
    if only:
        lines.append(f"  configs in only one report: {', '.join(only)}")
    if len(lines) == 1:
        lines.append("  no metric changed by more than the tolerance")
    return lines
