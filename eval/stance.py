"""`python -m eval.stance --split dev`: the real-conference claim benchmark, the rules-only checker
and the checker with the model's verdict side by side in one run.

Each claim of `eval/claims/conference-<split>.jsonl` (hand-written about real ICLR 2025 abstracts:
true paraphrases, and contradictions of eight kinds) is checked against its paper's abstract in the
index twice: by the rule checks alone (`Trust()`, as `citewise verify --no-verdict`), and by the
rule checks followed by the model's verdict on the sentences that best match it (as `citewise
verify`). A claim counts as flagged when the checker does not verify it. Prints a table per kind and
the seconds each verdict took (p50, p95); writes every result to `<out>/results.jsonl` and the table
to `<out>/summary.md`. Run it alone: it times the model.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path

from eval.gold import read_jsonl
from eval.metrics import percentiles
from rag.answer.pipeline import Pipeline
from rag.answer.trust import Stance, Trust
from rag.answer.verdicts import stance
from rag.answer.verify import ClaimInput, ClaimVerifier
from rag.search.evidence import Evidence

CLAIMS = Path(__file__).parent / "claims"


def table(rows: list[dict]) -> list[str]:
    """Markdown: per checker, the share of true claims kept and of each false kind flagged."""
    kinds = sorted({r["kind"] for r in rows} - {"paraphrase"})
    head = ["checker", "paraphrases kept", *kinds, "all contradictions flagged"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for checker in ("rules", "verdict"):
        by_kind: dict[str, list[bool]] = collections.defaultdict(list)
        for r in rows:
            by_kind[r["kind"]].append(r[checker])
        true = by_kind["paraphrase"]
        false = [not v for k in kinds for v in by_kind[k]]
        cells = [f"{sum(true)}/{len(true)}"]
        cells += [f"{sum(not v for v in by_kind[k])}/{len(by_kind[k])}" for k in kinds]
        cells.append(f"{sum(false)}/{len(false)} ({sum(false) / max(1, len(false)):.3f})")
        name = "rules only" if checker == "rules" else "rules + the model's verdict"
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(split: str, out: Path) -> None:
    claims = read_jsonl(CLAIMS / f"conference-{split}.jsonl")
    claims.sort(key=lambda c: c["paper_id"])
    pipeline = Pipeline()
    llm = pipeline.llm()
    seconds: list[float] = []

    def entail(claim: str, passage: str, ev: Evidence) -> Stance | None:
        started = time.perf_counter()
        said = stance(llm, claim, ev.paper.display_title, passage)
        seconds.append(time.perf_counter() - started)
        return said

    rules = ClaimVerifier(pipeline.store, pipeline.embedder, Trust())
    judged = ClaimVerifier(pipeline.store, pipeline.embedder, Trust(), entail=entail)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with (out / "results.jsonl").open("w", encoding="utf-8") as fh:
        for c in claims:
            item = ClaimInput(c["id"], c["claim"], c["paper_id"])
            a, b = rules.check(item), judged.check(item)
            row = {"id": c["id"], "kind": c["kind"], "rules": a.supported, "verdict": b.supported,
                   "said": b.verdict, "reason": b.reason, "passage": b.passage}  # fmt: skip
            rows.append(row)
            fh.write(json.dumps(row) + "\n")
    lines = table(rows)
    p = percentiles(seconds)
    timing = (
        f"Seconds per verdict: p50 {p['p50'] or 0:.2f}, p95 {p['p95'] or 0:.2f} ({len(seconds)} verdicts)."
    )
    (out / "summary.md").write_text("\n".join([*lines, "", timing, ""]), encoding="utf-8")
    print("\n".join(lines), timing, sep="\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "fresh"), default="dev")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    main(args.split, args.out or Path("reports") / f"claims-{args.split}")
