"""The sealed run's tables, and its per-item scores without text (`python -m eval.selector.sealed RUN`).

RUN is the folder of `citewise eval --gold ... -c hybrid -c rules -c llamaindex --share-drafts`.
Only items every configuration answered are counted (a run stopped early is compared on the same
items). Writes docs/data/<name>-run.jsonl: id, config, type, outcome and scores, no question,
answer or abstract text (the abstracts may not be committed).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

KEEP = ("facts_cited", "refused_answerable", "refused_unanswerable", "whole_sentences", "quotes_own_paper",
        "select_ms")  # fmt: skip
# A draft written as a list ("1. ...", "- ..."): each item is a line of its own.
_LISTED = re.compile(r"(?m)^\s*(?:\d{1,2}[.)]|[-*•])\s+")
TYPES = ("lookup", "numeric", "whichpaper", "twopart", "comparison", "followup")


def load(run: Path) -> tuple[list[str], dict[tuple[str, str], dict]]:
    rows = [json.loads(line) for line in (run / "progress.jsonl").read_text().splitlines() if line.strip()]
    configs = list(dict.fromkeys(r["config"] for r in rows))
    by = {(r["config"], r["id"]): r for r in rows}
    return configs, by


def common(configs: list[str], by: dict) -> list[str]:
    ids = [i for c, i in by if c == configs[0]]
    return [i for i in ids if all((c, i) in by for c in configs)]


def pct(values: list[float], q: float) -> float | None:
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def table(configs: list[str], by: dict, ids: list[str]) -> list[str]:
    lines = ["| measure | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]

    def frac(c: str, key: str, types=None) -> str:
        vals = [by[c, i]["scores"].get(key) for i in ids if types is None or by[c, i]["type"] in types]
        vals = [v for v in vals if v is not None]
        return f"{sum(vals):.0f}/{len(vals)} ({sum(vals) / len(vals):.3f})" if vals else "—"

    lines.append("| facts cited, answerable | " + " | ".join(frac(c, "facts_cited") for c in configs) + " |")
    for t in TYPES:
        lines.append(f"| — {t} | " + " | ".join(frac(c, "facts_cited", (t,)) for c in configs) + " |")
    lines.append(
        "| answerable refused | " + " | ".join(frac(c, "refused_answerable") for c in configs) + " |"
    )
    lines.append(
        "| unanswerable refused | " + " | ".join(frac(c, "refused_unanswerable") for c in configs) + " |"
    )
    for key in ("whole_sentences", "quotes_own_paper"):
        lines.append(f"| {key.replace('_', ' ')} | " + " | ".join(frac(c, key) for c in configs) + " |")
    for stage in ("first_token", "total", "verdict"):
        cells = []
        for c in configs:
            vals = [by[c, i]["latency"].get(stage) for i in ids]
            p50, p95 = pct(vals, 0.5), pct(vals, 0.95)
            cells.append("—" if p50 is None else f"{p50:.1f} / {p95:.1f}")
        lines.append(f"| {stage} s, p50 / p95 | " + " | ".join(cells) + " |")
    cells = []
    for c in configs:
        ms = [by[c, i]["scores"].get("select_ms") for i in ids]
        ms = [v for v in ms if v is not None]
        cells.append(f"{statistics.median(ms):.0f} / {pct(ms, 0.95):.0f}" if ms else "—")
    lines.append("| select stage ms, p50 / p95 | " + " | ".join(cells) + " |")
    outcomes = defaultdict(lambda: defaultdict(int))
    for i in ids:
        r = by[configs[0], i]
        outcomes[r["type"] == "unanswerable"][
            r.get("selected") or ("refuse" if r["abstained"] else "draft")
        ] += 1
    lines.append("")
    lines.append(
        f"{configs[0]} outcomes: answerable {dict(outcomes[False])}, unanswerable {dict(outcomes[True])}"
    )
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--skip-latency", action="append", default=[],
                    help="an item whose timings are not measurements (it spanned a pause of the run)")  # fmt: skip
    ap.add_argument(
        "--out", type=Path, default=None, help="per-item scores (default docs/data/<run>-run.jsonl)"
    )
    args = ap.parse_args(argv)
    configs, by = load(args.run)
    for (_, i), r in by.items():
        if i in args.skip_latency:
            r["latency"] = {k: None for k in r["latency"]}
    # Every configuration on the items all answered; then the first two on the items both answered
    # (a run continued without the last configuration).
    for chosen in (configs, configs[:2]) if len(configs) > 2 else (configs,):
        ids = common(chosen, by)
        print(f"{len(ids)} items answered by {', '.join(chosen)}\n")
        print("\n".join(table(chosen, by, ids)) + "\n")
    out = args.out or Path("docs/data") / f"{args.run.name}-run.jsonl"
    with out.open("w") as f:
        for (c, i), r in by.items():
            row = {"id": i, "config": c, "type": r["type"], "outcome": r.get("selected", ""),
                   "list_draft": bool(_LISTED.search(r.get("draft") or "")),
                   "abstained": r["abstained"], **{k: r["scores"].get(k) for k in KEEP},
                   **{k: r["latency"].get(k) for k in ("first_token", "total", "verdict")}}  # fmt: skip
            f.write(json.dumps(row) + "\n")
    print(f"\nper-item scores: {out}")


if __name__ == "__main__":
    main()
