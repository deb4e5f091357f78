"""Answers whose draft held the facts and lost them to the sentence decision
(`python -m eval.sentence_losses RUN_DIR --gold G [--out F]`).

For each answerable item of a run: did the model's draft hold every gold fact, does the shown
answer, and if not, does a sentence the decision removed hold one (the decision lost it)? `--out`
writes those flags per item, ids only (docs/data/; tests/test_sentence_losses.py reads them).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval import metrics as m
from eval.gold import load_gold, read_jsonl


def flags(row: dict, facts: list, question: str) -> dict:
    """Held by the draft, by the answer, and lost to the sentence decision."""
    draft = m.fact_recall(row.get("draft") or "", facts, question) in (1.0, None)
    answer = m.fact_recall(row.get("answer") or "", facts, question) in (1.0, None) and not row["abstained"]
    removed = row.get("removed") or []
    holding = [r for r in removed if m.fact_recall(r["text"], facts, question)]
    lost = draft and not answer and bool(holding)
    by_decision = lost and any("decision" in r.get("checks", []) for r in holding)
    return {"id": row["id"], "draft_held": draft, "answer_held": answer, "lost_to_removal": lost,
            "lost_to_decision": by_decision}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--gold", type=Path, nargs="+", required=True)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    items = {it.id: it for it in load_gold(args.gold)}
    rows = [
        r for r in read_jsonl(args.run / "results.jsonl") if items.get(r["id"]) and items[r["id"]].answerable
    ]
    out = [
        flags(r, items[r["id"]].facts, items[r["id"]].question) for r in rows if r.get("draft") is not None
    ]
    held = [o for o in out if o["draft_held"]]
    lost = [o["id"] for o in out if o["lost_to_decision"]]
    removal = [o["id"] for o in out if o["lost_to_removal"]]
    print(f"{len(out)} answerable items: the draft held the facts in {len(held)}, the answer in "
          f"{sum(o['answer_held'] for o in out)}; a removed sentence held them in {len(removal)} {removal}; "
          f"removed by the sentence decision: {len(lost)} {lost}")  # fmt: skip
    if args.out:
        args.out.write_text("".join(json.dumps(o) + "\n" for o in out))


if __name__ == "__main__":
    main()
