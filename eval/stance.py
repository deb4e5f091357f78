"""`python -m eval.stance N`: the model's verdict (`rag.answer.verdicts.stance`) on N claims drawn
with a fixed seed from the dev claim file, each against its paper's abstract in the index; prints
the verdicts per claim kind and the seconds per claim (p50, p90). Run it alone: it times the model."""

from __future__ import annotations

import collections
import random
import sys
import time
from pathlib import Path

from eval.gold import read_jsonl
from rag.answer.pipeline import Pipeline
from rag.answer.verdicts import stance

CLAIMS = Path(__file__).parent / "claims" / "conference-dev.jsonl"


def main(n: int) -> None:
    claims = random.Random(0).sample(read_jsonl(CLAIMS), n)
    claims.sort(key=lambda c: c["paper_id"])  # a paper's claims in a row reuse its cached prefix
    pipeline = Pipeline()
    papers = pipeline.store.papers(sorted({c["paper_id"] for c in claims}))
    llm = pipeline.llm()
    verdicts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    seconds = []
    for c in claims:
        paper = papers[c["paper_id"]]
        started = time.perf_counter()
        got = stance(llm, c["claim"], paper.display_title, paper.abstract)
        seconds.append(time.perf_counter() - started)
        verdicts[c["kind"]][got.value if got else "none"] += 1
    for kind, counts in sorted(verdicts.items()):
        print(kind, dict(counts))
    seconds.sort()
    print(
        f"seconds per claim: p50 {seconds[len(seconds) // 2]:.2f}, p90 {seconds[int(len(seconds) * 0.9)]:.2f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
