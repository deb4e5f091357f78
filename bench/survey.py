"""How fast a survey list appears: `python -m bench.survey [--gold F] [--limit N]`.

For each question of a survey gold file, the answer path (`Pipeline.stream`) is followed until the
model would start writing: the time to the first list on the page (the question reader's reading)
and to the whole list (the model's reading, when the reader was unsure, included). Also the alias
table's cost: extracting every acronym definition of the indexed chunks (what ingest adds to the
keyword index). Prints p50 / p95 with the CPU's name; run it alone on the machine."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from eval.metrics import percentiles
from rag.index.embedding.choice import cpu_model

GOLD = Path(__file__).resolve().parents[1] / "eval" / "gold" / "conference" / "survey-dev-b.jsonl"


def list_times(pipeline, question: str) -> tuple[float | None, float | None]:
    """(seconds to the first list, seconds to the last list)."""
    from rag.answer.events import PreviewEvent, SurveyEvent, TokenEvent

    started = time.perf_counter()
    first = last = None
    for event in pipeline.stream(question):
        now = time.perf_counter() - started
        if isinstance(event, SurveyEvent):
            first = first if first is not None else now
            last = now
        if isinstance(event, (PreviewEvent, TokenEvent)):
            break  # the list is done; what follows is the model's synthesis
    return first, last


def alias_cost(store) -> tuple[float, int, int]:
    """(seconds, chunks read, definitions) to extract the acronym definitions of every chunk."""
    from rag.index.aliases import extract
    from rag.index.keyword import collection_source

    ids, fetch = collection_source(store.collection, 5000)
    docs = [doc or "" for _, doc, _ in fetch(ids())]
    started = time.perf_counter()
    found = sum(len(extract(d)) for d in docs)
    return time.perf_counter() - started, len(docs), found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gold", type=Path, default=GOLD)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings

    pipeline = Pipeline(Settings())
    items = [json.loads(line) for line in args.gold.read_text().splitlines()]
    items = items[: args.limit] if args.limit else items
    list_times(pipeline, items[0]["question"])  # loads the reader, the judge and the model
    firsts, lasts, reread = [], [], 0
    for item in items:
        first, last = list_times(pipeline, item["question"])
        firsts.append(first)
        lasts.append(last)
        reread += pipeline.unsure(pipeline.parse(item["question"]))
    f, w = percentiles(firsts), percentiles(lasts)
    print(
        f"{cpu_model()}: {len(items)} survey questions of {args.gold.name}, {reread} read again by the model"
    )
    print(
        f"  first list: p50 {f['p50']:.2f} s, p95 {f['p95']:.2f} s ({sum(x is not None for x in firsts)} lists)"
    )
    print(f"  whole list: p50 {w['p50']:.2f} s, p95 {w['p95']:.2f} s")
    seconds, chunks, found = alias_cost(pipeline.store)
    print(f"  alias table: {found} definitions from {chunks} chunks in {seconds:.1f} s")


if __name__ == "__main__":
    main()
