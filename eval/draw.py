"""Draw the papers the real-conference gold set is written about, and split them by paper.

Run once; the output (`eval/gold/conference/papers.jsonl`) is committed, so the split never moves.
Papers are drawn at random with a fixed seed from the conference minus the seed papers, then
assigned to dev or test by a hash of their id, so every item about a paper lands in that
paper's split and no paper is seen on both sides.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
from pathlib import Path

CONFERENCE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.jsonl.gz"
)
SEED_PAPERS = Path(__file__).resolve().parents[1] / "seeds" / "papers.jsonl"
OUT = Path(__file__).parent / "gold" / "conference" / "papers.jsonl"


def split_of(paper_id: str) -> str:
    """dev or test, from a hash of the paper id (stable across runs and machines)."""
    return "test" if int(hashlib.sha256(paper_id.encode()).hexdigest(), 16) % 2 else "dev"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--corpus", type=Path, default=CONFERENCE)
    ap.add_argument("-n", type=int, default=140)
    ap.add_argument("--seed", type=int, default=20251203)
    args = ap.parse_args()
    seeds = {json.loads(line)["id"] for line in SEED_PAPERS.read_text().splitlines() if line}
    with gzip.open(args.corpus, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    pool = sorted(
        (r for r in rows if r["id"] not in seeds and len(r.get("abstract") or "") >= 400),
        key=lambda r: r["id"],
    )
    drawn = random.Random(args.seed).sample(pool, args.n)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as fh:
        for r in sorted(drawn, key=lambda r: r["id"]):
            fh.write(json.dumps({"id": r["id"], "title": r["title"], "split": split_of(r["id"])}) + "\n")
    print(f"{args.n} papers -> {OUT}")


if __name__ == "__main__":
    main()
