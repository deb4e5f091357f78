"""Calibrate `min_relevance`, the retrieval score under which citewise abstains without spending a
generation, on gold data.

Refusing an answerable question costs the user an answer; letting an unanswerable one through
costs one generation, after which the model and the answer check can still refuse. So the
threshold is the highest one that keeps wrongly refused answerable items within `max_false`
(default: none), set a margin below the least relevant answerable item.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eval.gold import GoldItem
from eval.runner import System
from rag import questions as qs
from rag.answer.pipeline import Pipeline


@dataclass
class Calibration:
    threshold: float
    rows: list[tuple[float, GoldItem]]  # best dense similarity per item, ascending
    caught: int  # unanswerable items under the threshold
    unanswerable: int
    wrongly_refused: int

    def lines(self) -> list[str]:
        out = [f"{'relevance':>9}  {'type':12} item"]
        marked = False
        for rel, item in self.rows:
            if not marked and rel >= self.threshold:
                out.append(f"{self.threshold:9.3f}  ---- threshold: abstain below ----")
                marked = True
            out.append(f"{rel:9.3f}  {item.type:12} {item.id}  {item.question[:60]}")
        out.append(
            f"min_relevance = {self.threshold:.2f}: refuses {self.caught}/{self.unanswerable} unanswerable "
            f"items before generation and {self.wrongly_refused} answerable ones"
        )
        return out


def best_relevance(pipeline: Pipeline, item: GoldItem) -> float:
    """The best dense similarity among the papers an answer to `item` would use."""
    turns = System(pipeline).history(item, answer=False)
    intent = qs.parse(item.question, turns)
    results = pipeline.search(intent.query, pipeline.settings.answer_k, alternatives=intent.alternatives)
    return max((r.relevance for r in results), default=0.0)


def calibrate(
    pipeline: Pipeline, items: Sequence[GoldItem], *, max_false: int = 0, margin: float = 0.015
) -> Calibration:
    rows = sorted(((best_relevance(pipeline, it), it) for it in items), key=lambda r: r[0])
    answerable = [rel for rel, it in rows if it.answerable]
    if not answerable:
        raise ValueError("calibration needs answerable gold items")
    floor = answerable[min(max_false, len(answerable) - 1)]
    threshold = round(max(0.0, floor - margin), 2)
    caught = sum(1 for rel, it in rows if not it.answerable and rel < threshold)
    wrong = sum(1 for rel in answerable if rel < threshold)
    return Calibration(threshold, rows, caught, sum(not it.answerable for _, it in rows), wrong)
