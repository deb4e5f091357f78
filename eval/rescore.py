"""Score a stored run again with today's metrics: `citewise eval --rescore DIR`.

A run made by an older commit keeps its answers and citations in `results.jsonl`; rescoring them
with the current metric functions (facts without `[n]` markers or question words, uncited answers
at citation precision 0, refusal shares) makes two commits comparable on the same gold items
without generating again. The result goes to `DIR/rescored/`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.gold import GoldItem, read_jsonl
from eval.report import write_report
from eval.runner import ItemResult, answer_scores, is_correct, retrieval_scores
from rag.types import Answer, Citation, Timings


def _answer(row: dict[str, Any]) -> Answer:
    citations = [
        Citation(
            c["number"],
            c["paper_id"],
            c.get("title", ""),
            "",
            [],
            c.get("passage", ""),
            0,
            0,
            c.get("score", 0),
        )
        for c in row.get("citations", [])
    ]
    return Answer(
        row["question"], row["answer"], citations, [], row["abstained"], [], Timings(), error=row["error"]
    )


def rescore(folder: Path, items: list[GoldItem]) -> tuple[Path, dict[str, Any]]:
    by_id = {i.id: i for i in items}
    rows = read_jsonl(folder / "results.jsonl")
    results = []
    for row in rows:
        item = by_id.get(row["id"])
        if item is None:
            raise ValueError(f"{folder}/results.jsonl: item {row['id']!r} is not in the gold set")
        fields = {k: row.get(k) for k in ItemResult.__dataclass_fields__ if k in row}
        result = ItemResult(**fields)
        result.scores = retrieval_scores(row["ranked"], item.papers)
        if row.get("answered"):
            answer = _answer(row)
            result.scores |= answer_scores(item, answer)
            result.scores["correct"] = float(is_correct(item, answer))
            if row["config"] == "llamaindex":
                result.scores["supported_sentences"] = None
        results.append(result)
    meta = json.loads((folder / "summary.json").read_text())
    meta = {k: v for k, v in meta.items() if k not in ("configs", "by_type", "ablation")}
    meta["command"] = f"{meta.get('command', '')} (rescored with today's metrics)"
    out = folder / "rescored"
    return out, write_report(out, results, meta)
