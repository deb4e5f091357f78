"""`python -m eval.similar`: do the papers `citewise similar` lists share the paper's primary area
more often than chance? The conference's own labels (each paper's primary area) are the yardstick;
chance is the share of the other papers in the index that have the paper's area."""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path

from eval.gold import CONFERENCE_GOLD
from rag.answer.pipeline import Pipeline
from rag.search.similar import similar
from rag.settings import Settings


def dev_papers(n: int) -> list[str]:
    """The first `n` distinct gold papers of the dev split (questions were written about them)."""
    ids: list[str] = []
    for name in ("dev-a.jsonl", "dev-b.jsonl"):
        for line in (CONFERENCE_GOLD / name).read_text().splitlines():
            for pid in json.loads(line).get("papers", []):
                if pid not in ids:
                    ids.append(pid)
    return ids[:n]


def areas(pipeline: Pipeline) -> dict[str, str]:
    got = pipeline.store.collection.get(where={"position": 0}, include=["metadatas"])
    return {
        m["paper_id"]: json.loads(m["paper"]).get("extra", {}).get("primary_area", "")
        for m in got["metadatas"]
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m eval.similar")
    parser.add_argument("--n", type=int, default=30, help="dev papers to ask about")
    parser.add_argument("--k", type=int, default=5, help="similar papers per paper")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON lines here")
    args = parser.parse_args()
    pipeline = Pipeline(Settings())
    area = areas(pipeline)
    sizes = Counter(area.values())
    rows = []
    for pid in dev_papers(args.n):
        if not area.get(pid):
            continue
        _, found = similar(pipeline.store, pipeline.embedder, pipeline.sentence_vectors, pid, args.k)
        same = sum(area.get(s.paper.id) == area[pid] for s in found)
        chance = (sizes[area[pid]] - 1) / (len(area) - 1)
        rows.append({"paper": pid, "area": area[pid], "same": same, "k": len(found), "chance": chance})
    share = sum(r["same"] for r in rows) / max(1, sum(r["k"] for r in rows))
    chance = statistics.mean(r["chance"] for r in rows) if rows else 0.0
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(
        f"{len(rows)} dev papers, {args.k} similar each: same primary area {share:.3f}, chance {chance:.3f}"
    )


if __name__ == "__main__":
    main()
