"""Draw the papers the real-conference gold set is written about.

Run once per split; the output is committed, so a split never moves.

- `python -m eval.draw` drew the first 140 papers (`eval/gold/conference/papers.jsonl`), assigned
  to two halves by a hash of their id: today dev-a and dev-b, every item about a paper in that
  paper's half.
- `python -m eval.draw --fresh` draws the sealed test split's papers
  (`eval/gold/conference/papers-test.jsonl`): new papers, none named anywhere in the gold or claim
  files (items, survey lists and their exclusions, claims), so nobody has tuned on them.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFERENCE = ROOT.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.jsonl.gz"
SEED_PAPERS = ROOT / "seeds" / "papers.jsonl"
GOLD = Path(__file__).parent / "gold" / "conference"
OUT = GOLD / "papers.jsonl"
FRESH_OUT = GOLD / "papers-test.jsonl"


def split_of(paper_id: str) -> str:
    """dev-a or dev-b, from a hash of the paper id (stable across runs and machines)."""
    return "dev-b" if int(hashlib.sha256(paper_id.encode()).hexdigest(), 16) % 2 else "dev-a"


def _ids_in(row: dict) -> set[str]:
    """Every paper id a gold, survey or claim row names."""
    ids = set(row.get("papers") or []) | set(row.get("excluded") or {})
    ids |= {row[k] for k in ("about", "paper_id", "id") if isinstance(row.get(k), str)}
    return ids


def used_papers(folders: list[Path]) -> set[str]:
    """Paper ids named in any JSONL file under these folders (ids of items are harmless extras)."""
    used: set[str] = set()
    for folder in folders:
        for file in sorted(folder.rglob("*.jsonl")):
            for line in file.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    used |= _ids_in(json.loads(line))
    return used


def draw(corpus: Path, n: int, seed: int, exclude: set[str]) -> list[dict]:
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    pool = sorted(
        (r for r in rows if r["id"] not in exclude and len(r.get("abstract") or "") >= 400),
        key=lambda r: r["id"],
    )
    return sorted(random.Random(seed).sample(pool, n), key=lambda r: r["id"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CONFERENCE)
    ap.add_argument("--fresh", action="store_true", help="Draw the sealed test split's papers.")
    ap.add_argument("-n", type=int, default=None, help="Papers to draw (140; 120 with --fresh).")
    ap.add_argument("--seed", type=int, default=None, help="20251203; 20261205 with --fresh.")
    args = ap.parse_args()
    seeds = {json.loads(line)["id"] for line in SEED_PAPERS.read_text().splitlines() if line}
    if args.fresh:
        exclude = seeds | used_papers([GOLD, ROOT / "eval" / "claims", ROOT / "eval" / "gold"])
        drawn = draw(args.corpus, args.n or 120, args.seed or 20261205, exclude)
        rows = [{"id": r["id"], "title": r["title"], "split": "test"} for r in drawn]
        out = FRESH_OUT
    else:
        drawn = draw(args.corpus, args.n or 140, args.seed or 20251203, seeds)
        rows = [{"id": r["id"], "title": r["title"], "split": split_of(r["id"])} for r in drawn]
        out = OUT
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} papers -> {out}")


if __name__ == "__main__":
    main()
