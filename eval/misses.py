"""Why an answer missed: every miss of a stored run, put in one cause by what the run recorded.

`python -m eval.misses REPORT_DIR [--split dev] [--config hybrid]` prints the counts per cause and writes
`REPORT_DIR/misses.jsonl` (one line per miss, with the evidence for its cause) for reading by hand.
A miss is an answerable item without every fact and a gold paper cited, or an unanswerable item
answered. The causes, in the order they are tested (the first that holds is the cause):

  not_retrieved             no gold paper among the sources the model read
  refused_before_writing    a rule refused before the model wrote (which rule)
  true_sentence_removed     a sentence holding the missing facts was removed (by which check);
                            the answer was then refused or shown without it
  refused_after_writing     the draft lacked the facts and a rule refused it (which rule): the model
                            did not find the answer in sources that hold it
  non_answer_shown          the draft lacked the facts and was shown as a checked answer
  part_missing              some of the facts shown, not all (a two-part or comparison answer)
  wrong_paper_cited         every fact shown, no gold paper cited
  unanswerable_answered     an unanswerable question answered
  error                     no answer was made (a replay without a stored draft for every prompt)

What a stored run cannot tell (a contradiction shown, a number misread, right in other words) is
for the reader of misses.jsonl; docs/evaluation.md gives both counts.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from eval import metrics as m
from eval.gold import GoldItem, load_gold, read_jsonl
from eval.halves import gold_files, half_of
from eval.runner import ItemResult
from rag.answer.trust import PRE_GENERATION_RULES


@dataclass
class Miss:
    id: str
    type: str
    cause: str
    detail: str  # the rule or check, when the cause has one
    question: str
    answer: str
    draft: str

    def label(self) -> str:
        return f"{self.cause} ({self.detail})" if self.detail else self.cause


def _has(text: str, facts: Sequence[Sequence[str]], question: str) -> float:
    return m.fact_recall(text, facts, question) or 0.0


def classify(r: ItemResult, item: GoldItem) -> Miss | None:
    """The miss's cause, or None when the item was answered right."""

    def miss(cause: str, detail: str = "") -> Miss:
        return Miss(r.id, r.type, cause, detail, r.question, r.answer, r.draft)

    if not item.answerable:
        return None if r.abstained else miss("unanswerable_answered")
    if r.scores.get("facts_cited") == 1.0 or r.type == "survey":
        return None
    if r.error:
        return miss("error", r.error.split(" for ")[0])
    if not set(r.sources) & set(item.papers) and r.abstain_code not in PRE_GENERATION_RULES:
        return miss("not_retrieved")
    if r.abstained and r.abstain_code in PRE_GENERATION_RULES:
        return miss("refused_before_writing", r.abstain_code)
    shown = 0.0 if r.abstained else _has(r.answer, item.facts, item.question)
    for removed in r.removed:
        if _has(removed["text"], item.facts, item.question) > shown:
            return miss("true_sentence_removed", ", ".join(removed.get("checks") or removed["failed"]))
    if r.abstained:
        return miss("refused_after_writing", r.abstain_code)
    if shown == 0.0:
        return miss("non_answer_shown")
    if shown < 1.0:
        return miss("part_missing")
    return miss("wrong_paper_cited")


def misses(results: Sequence[ItemResult], items: Sequence[GoldItem], config: str) -> list[Miss]:
    by_id = {i.id: i for i in items}
    found = (classify(r, by_id[r.id]) for r in results if r.config == config and r.answered and r.id in by_id)
    return [x for x in found if x is not None]


def counts(found: Sequence[Miss], halves: dict[str, str]) -> list[str]:
    """A Markdown table: each cause's count on dev-a, dev-b and both."""
    per = {h: Counter(x.label() for x in found if halves.get(x.id) == h) for h in ("dev-a", "dev-b")}
    total = Counter(x.label() for x in found)
    lines = ["| cause | dev-a | dev-b | both |", "|---|---|---|---|"]
    for label, n in total.most_common():
        lines.append(f"| {label} | {per['dev-a'][label]} | {per['dev-b'][label]} | {n} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", type=Path, help="A report folder of `citewise eval` (its results.jsonl).")
    ap.add_argument("--split", default="dev", help="The gold split the run answered (dev-a, dev-b, dev).")
    ap.add_argument("--config", default="hybrid")
    args = ap.parse_args(argv)
    items = load_gold(gold_files(args.split))
    results = [ItemResult(**row) for row in read_jsonl(args.report / "results.jsonl")]
    found = misses(results, items, args.config)
    with open(args.report / "misses.jsonl", "w", encoding="utf-8") as fh:
        for x in found:
            fh.write(json.dumps(x.__dict__, ensure_ascii=False) + "\n")
    print("\n".join(counts(found, half_of())))


if __name__ == "__main__":
    main()
