"""The support judge's cost: `python -m bench.judge [--claims FILE]`.

Scores each claim of a claims file against its paper's best sentences, as `citewise verify` and the
answer check do, one pair at a time (what an answer sentence costs) and in batches of 16 (what a
whole answer or a claims file costs), and prints milliseconds a pair with the CPU's name.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from eval.metrics import percentiles
from rag.index.embedding.choice import cpu_model
from rag.judge.support import support_judge

CLAIMS = Path(__file__).resolve().parents[1] / "eval" / "claims" / "conference-dev.jsonl"


def pairs_of(path: Path) -> list[tuple[str, str]]:
    from eval.judge.claims import judge_pairs, read
    from rag.index.embedding import embedder_from_settings
    from rag.settings import Settings

    return judge_pairs(read([path]), embedder_from_settings(Settings()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    args = parser.parse_args()
    pairs = pairs_of(args.claims)
    judge = support_judge()
    judge.judge(pairs[:4])  # load and warm up
    single = []
    for pair in pairs:
        started = time.perf_counter()
        judge.judge([pair])
        single.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    judge.judge(pairs)
    batched = (time.perf_counter() - started) * 1000 / len(pairs)
    p = percentiles(single)
    print(f"support judge on {cpu_model()}, {len(pairs)} claims of {args.claims.name}:")
    print(
        f"  one pair a call: p50 {p['p50']:.1f} ms, p95 {p['p95']:.1f} ms; in batches of 16: {batched:.1f} ms a pair"
    )


if __name__ == "__main__":
    main()
