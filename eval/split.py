"""The dev/test split of the seed gold set (now the regression set), made once and committed as
`eval/gold/seeds/dev.jsonl` and `eval/gold/seeds/test.jsonl`.

Thresholds and rules are tuned on dev only; headline numbers are reported on test. The split is
stratified by question type and near-miss flag, and within each stratum deterministic (items
ordered by a hash of their id, alternating test/dev), so re-running it on the same items gives
the same files. New items are appended to one of the two files by hand, keeping the balance;
`python -m eval.split --check` verifies that every stratum stays balanced within one item.

Items marked `"dev_only": true` were written later to measure one change on dev; they are left out
of the balance.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

from eval.gold import read_jsonl

GOLD_DIR = Path(__file__).parent / "gold" / "seeds"
SPLITS = ("dev", "test")


def stratum(row: dict) -> tuple[str, bool]:
    return row["type"], bool(row.get("near_miss", False))


def split_rows(rows: list[dict]) -> dict[str, list[dict]]:
    """Assign each row to dev or test, half of every stratum each (test gets the odd one)."""
    groups: dict[tuple[str, bool], list[dict]] = defaultdict(list)
    for row in rows:
        groups[stratum(row)].append(row)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for key in sorted(groups):
        ordered = sorted(groups[key], key=lambda r: hashlib.sha256(str(r["id"]).encode()).hexdigest())
        for i, row in enumerate(ordered):
            out["test" if i % 2 == 0 else "dev"].append(row)
    for rows_ in out.values():
        rows_.sort(key=lambda r: rows.index(r))
    return out


def imbalance(dev: list[dict], test: list[dict]) -> list[str]:
    """Strata whose dev and test counts differ by more than one item."""
    counts: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0])
    for i, rows in enumerate((dev, test)):
        for row in rows:
            if not row.get("dev_only"):
                counts[stratum(row)][i] += 1
    return [f"{t}{' (near miss)' if nm else ''}: dev {d}, test {s}" for (t, nm), (d, s) in
            sorted(counts.items()) if abs(d - s) > 1]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, help="One gold file to split into dev/test.")
    parser.add_argument("--check", action="store_true", help="Check the committed split's balance.")
    args = parser.parse_args(argv)
    if args.source:
        parts = split_rows(read_jsonl(args.source))
        for name, rows in parts.items():
            (GOLD_DIR / f"{name}.jsonl").write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
            )
            print(f"{name}: {len(rows)} items")
    bad = imbalance(read_jsonl(GOLD_DIR / "dev.jsonl"), read_jsonl(GOLD_DIR / "test.jsonl"))
    for line in bad:
        print(f"unbalanced: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
