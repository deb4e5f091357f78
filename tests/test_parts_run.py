"""Over every answer of the sealed run of answers by parts (docs/data/sealed-71-run.jsonl, written
by `python -m eval.parts_tables`): no fact given to the wrong paper."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

RUN = Path(__file__).resolve().parent.parent / "docs" / "data" / "sealed-71-run.jsonl"


def _rows(config: str) -> list[dict]:
    return [r for r in map(json.loads, RUN.read_text().splitlines()) if r["config"] == config]


def test_the_run_holds_every_kind_it_judges():
    kinds = Counter(r["type"] for r in _rows("hybrid"))
    assert kinds["comparison"] >= 40 and kinds["followup"] >= 40 and kinds["twopart"] >= 30, kinds


def test_every_part_of_every_comparison_answer_cites_its_own_paper_only():
    comparisons = [r for r in _rows("hybrid") if r["type"] == "comparison"]
    in_parts = [r for r in comparisons if r["parts"]]
    assert len(in_parts) >= 30, len(in_parts)
    wrong = [
        (r["id"], p["paper_id"], p["cited"])
        for r in in_parts
        for p in r["parts"]
        if p["answered"] and set(p["cited"]) != {p["paper_id"]}
    ]
    assert wrong == []
    # Read as a comparison (its parts named by the things compared), its parts are two papers, one each;
    # the others were read as two-part questions, their clauses on one paper or on a paper each names.
    compared = [r for r in in_parts if all(p["label"] for p in r["parts"])]
    assert len(compared) >= 25 and all(
        len({p["paper_id"] for p in r["parts"]}) == len(r["parts"]) == 2 for r in compared
    )


def test_the_answer_before_parts_is_in_the_same_run():
    # The config it is judged beside answered the same items, in one prompt (no parts).
    whole = _rows("whole")
    assert {r["id"] for r in whole} == {r["id"] for r in _rows("hybrid")}
    assert all(not r["parts"] for r in whole)
