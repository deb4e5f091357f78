"""Over a run's answers: no answer whose draft held the facts lost them to the sentence decision
(docs/data/sentence-decision-s77.jsonl, written by `python -m eval.sentence_losses RUN --gold G --out F`
from the sealed-77 replay of docs/evaluation.md; ids and flags only)."""

import json

from eval.sentence_losses import flags
from tests.conftest import ROOT

RUN = ROOT / "docs" / "data" / "sentence-decision-s77.jsonl"


def test_no_answer_whose_draft_held_the_facts_lost_them_to_the_sentence_decision():
    rows = [json.loads(line) for line in RUN.read_text().splitlines()]
    held = [r for r in rows if r["draft_held"]]
    assert len(rows) == 122 and len(held) >= 80  # the run's answerable items, most drafts right
    assert [r["id"] for r in rows if r["lost_to_decision"]] == []


def test_a_fact_lost_with_a_sentence_the_decision_removed_is_counted():
    facts = [["1300x"]]
    row = {"id": "q", "abstained": False, "draft": "It is 1300x faster. It is new.", "answer": "It is new [1].",
           "removed": [{"text": "It is 1300x faster.", "checks": ["decision", "numbers"]}]}  # fmt: skip
    assert flags(row, facts, "How much faster?")["lost_to_decision"]
    kept = row | {"answer": "It is 1300x faster [1].", "removed": []}
    assert not flags(kept, facts, "How much faster?")["lost_to_decision"]
    by_verdict = row | {"removed": [{"text": "It is 1300x faster.", "checks": ["verdict"]}]}
    assert (
        flags(by_verdict, facts, "q")["lost_to_removal"]
        and not flags(by_verdict, facts, "q")["lost_to_decision"]
    )
