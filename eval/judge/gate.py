"""What the answer judge sees before the model writes, on gold items, without generating:
`python -m eval.judge.gate --split dev [--config judged280]` (the conference index).

For every item: the sources the pipeline offers (the config's evidence, ordered by the judge) and
the best p(answers) of any of their sentences, the number the `no_answering_sentence` rule reads.
Printed per gold file: AUC of that number for answerable against unanswerable items, and at each
threshold the share of answerable and of unanswerable items it would refuse before generation,
beside the rules that refuse before generation today.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval.configs import get_config
from eval.gold import load_gold
from eval.judge.answers import auc
from eval.runner import System, make_system
from rag import question as qs

THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3)


def screen(system: System, item) -> dict:
    """The best judged sentence of the item's offered sources, and whether today's rules refuse."""
    pipeline = system.pipeline
    intent = qs.parse(item.question, system.history(item, answer=False))
    qvec, results = pipeline.find(intent)
    evidence = pipeline.sources(intent, qvec, results)
    judged = [(s.answers, s.text) for ev in evidence for s in ev.sentences if s.answers is not None]
    best = max(judged, default=(None, ""))
    today = pipeline.trust.without("no_answering_sentence").screen(intent, results)
    return {"id": item.id, "answerable": item.answerable, "lists": intent.asks_for_papers or len(intent.parts) > 1, "best": best[0],
            "sentence": best[1], "today": today.code if today else None}  # fmt: skip


def report(rows: list[dict], name: str) -> None:
    # Lists and questions in several parts are not judged (`no_answering_sentence`).
    rows = [r for r in rows if not r["lists"] and r["best"] is not None]
    pos = [r["best"] for r in rows if r["answerable"]]
    neg = [r["best"] for r in rows if not r["answerable"]]
    print(f"\n{name}: {len(pos)} answerable, {len(neg)} unanswerable; AUC {auc(pos, neg):.3f}")
    today_a = sum(bool(r["today"]) for r in rows if r["answerable"])
    today_u = sum(bool(r["today"]) for r in rows if not r["answerable"])
    print(
        f"| threshold | answerable refused | unanswerable refused |\n|---|---|---|\n| today's rules | {today_a} | {today_u} |"
    )
    for t in THRESHOLDS:
        a = sum(bool(r["today"]) or r["best"] < t for r in rows if r["answerable"])
        u = sum(bool(r["today"]) or r["best"] < t for r in rows if not r["answerable"])
        print(f"| {t} (+ today's) | {a} ({a / max(len(pos), 1):.3f}) | {u} ({u / max(len(neg), 1):.3f}) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold", nargs="+", type=Path)
    parser.add_argument("--config", default="judged", help="an eval config with the judge on")
    parser.add_argument("--out", type=Path, default=None, help="write each item's row here (JSONL)")
    args = parser.parse_args()
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings

    system = make_system(get_config(args.config), Pipeline(Settings()))
    for path in args.gold:
        rows = [screen(system, item) for item in load_gold([path])]
        if args.out:
            with open(args.out, "a") as f:
                f.writelines(json.dumps(r | {"file": path.name}) + "\n" for r in rows)
        report(rows, path.name)


if __name__ == "__main__":
    main()
