"""Tables of a run of answers by parts, and its per-item scores without text
(`python -m eval.parts_tables RUN [RUN ...] --name NAME`).

Each RUN is the folder of `citewise eval --gold ... -c hybrid -c whole [-c llamaindex]`; several
runs (one with the baseline on the first items, one continued without it) are read together and
each config is counted on the items every config of its run answered. Facts with the right papers
cited: every fact, and every gold paper cited (a comparison needs both of its papers). Time: the
whole answer's p50 for questions in parts against one-part questions of the same run. Writes
docs/data/<name>-run.jsonl (id, config, type, scores, parts' papers: no question, answer or
abstract text) and docs/data/<name>-tables.md.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from eval.selector.sealed import common, load, pct
from rag import text as tx

PARTS_TYPES = ("comparison", "followup", "twopart")
ONE_PART = ("lookup", "numeric", "whichpaper")
KEEP = ("facts_cited", "facts_papers_cited", "refused_answerable", "parts_own_paper", "whole_sentences")


def frac(rows: list[dict], key: str) -> str:
    vals = [r["scores"].get(key) for r in rows]
    vals = [v for v in vals if v is not None]
    return f"{sum(vals):.0f}/{len(vals)} ({sum(vals) / len(vals):.3f})" if vals else "—"


def p50(rows: list[dict]) -> float | None:
    return pct([r["latency"].get("total") for r in rows], 0.5)


def misattributed(row: dict, things: dict[str, str]) -> bool | None:
    """Whether a comparison answer has a sentence that names one thing compared and cites only the
    other's paper (`things`: label -> its paper, read from the answer by parts of the same item);
    None when the answer cites nothing."""
    numbers = {c["number"]: c["paper_id"] for c in row["citations"]}
    if not numbers:
        return None
    # Split at every sentence end, quotes included (a quote after a sentence is a sentence of its own).
    for sentence in re.split(r"(?<=[.!?”\"])\s+(?=[“\"A-Z])", row["answer"]):
        cited = {numbers[int(n)] for n in re.findall(r"\[(\d+)\]", sentence) if int(n) in numbers}
        named = {paper for label, paper in things.items() if _names(label, sentence)}
        if cited and len(named) == 1 and not cited & named:
            return True
    return False


def _names(label: str, sentence: str) -> bool:
    said = tx.names(label) or set(tx.content_words(label))
    return bool(said) and all(tx.name_in(n, sentence) for n in said)


def wrong_paper(configs: list[str], by: dict, ids: list[str], parts_config: str = "hybrid") -> list[str]:
    """Per config: comparison answers with a finding given to the other paper (`misattributed`)."""
    cells = []
    for c in configs:
        found = []
        for i in ids:
            row, parted = by[c, i], by.get((parts_config, i))
            if row["type"] != "comparison" or not parted or len(parted.get("parts", [])) != 2:
                continue
            found.append(misattributed(row, {p["label"]: p["paper_id"] for p in parted["parts"]}))
        judged = [f for f in found if f is not None]
        cells.append(f"{sum(judged)}/{len(judged)}" if judged else "—")
    return [
        "| comparison: a sentence naming one paper's thing cites only the other | " + " | ".join(cells) + " |"
    ]


def run_table(configs: list[str], by: dict, ids: list[str]) -> list[str]:
    lines = [f"{len(ids)} items, every config of the run on each", "",
             "| measure | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]  # fmt: skip
    rows = {c: [by[c, i] for i in ids] for c in configs}
    for t in (*PARTS_TYPES, *ONE_PART):
        if not any(r["type"] == t for r in rows[configs[0]]):
            continue
        for key in ("facts_papers_cited", "facts_cited", "refused_answerable"):
            cells = [frac([r for r in rows[c] if r["type"] == t], key) for c in configs]
            lines.append(f"| {t}: {key} | " + " | ".join(cells) + " |")
    cells = [frac([r for r in rows[c] if r["type"] == "comparison"], "parts_own_paper") for c in configs]
    lines.append("| comparison: every part cites its own paper only | " + " | ".join(cells) + " |")
    lines += wrong_paper(configs, by, ids)
    for name, types in (("in parts", PARTS_TYPES), ("two-part + comparison", ("twopart", "comparison")),
                        ("one part", ONE_PART)):  # fmt: skip
        cells = []
        for c in configs:
            t = p50([r for r in rows[c] if r["type"] in types])
            cells.append("—" if t is None else f"{t:.1f} s")
        lines.append(f"| whole answer p50, {name} | " + " | ".join(cells) + " |")
    for c in configs:
        two = p50([r for r in rows[c] if r["type"] in ("twopart", "comparison")])
        one = p50([r for r in rows[c] if r["type"] in ONE_PART])
        if two and one:
            lines.append(f"\n{c}: two-part and comparison p50 / one-part p50 = {two / one:.2f}")
    return lines


def per_item(configs: list[str], by: dict, ids: list[str]) -> list[dict]:
    return [
        {
            "id": i,
            "config": c,
            "type": by[c, i]["type"],
            "abstained": by[c, i]["abstained"],
            "scores": {k: by[c, i]["scores"].get(k) for k in KEEP},
            "total_s": by[c, i]["latency"].get("total"),
            "parts": by[c, i].get("parts", []),
        }  # fmt: skip
        for c in configs
        for i in ids
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--name", required=True, help="docs/data/<name>-run.jsonl and -tables.md")
    ap.add_argument("--docs", type=Path, default=Path("docs/data"))
    args = ap.parse_args(argv)
    lines, items = [], []
    for run in args.runs:
        configs, by = load(run)
        ids = common(configs, by)
        lines += [f"## {run.name}: {', '.join(configs)}", "", *run_table(configs, by, ids), ""]
        items += per_item(configs, by, ids)
    args.docs.mkdir(parents=True, exist_ok=True)
    (args.docs / f"{args.name}-tables.md").write_text("\n".join(lines) + "\n")
    with open(args.docs / f"{args.name}-run.jsonl", "w") as f:
        for row in items:
            f.write(json.dumps(row) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
