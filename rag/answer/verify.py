"""`citewise verify`: check claims against the abstracts in the index, with the same checks an
answer sentence gets (`rag.answer.trust.Trust.verify`), against the whole abstract.

A claims file is JSON lines, `{"id", "claim", "paper_id"?}`; without `paper_id` the indexed paper
that best matches the claim is used. A bad line or an unknown paper id gives that claim an error
naming the line; the other claims are still judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag.answer.trust import Entail, Stance, Trust, has_claim
from rag.index.embedding import Embedder
from rag.index.readers import json_objects
from rag.index.store import Store
from rag.search.evidence import evidence_for
from rag.search.retrieve import search
from rag.types import Check, Paper


@dataclass
class ClaimInput:
    id: str
    claim: str
    paper_id: str | None = None
    error: str = ""  # set when the input line itself is unusable


@dataclass
class ClaimResult:
    """What `citewise verify` prints per claim."""

    id: str
    supported: bool
    reason: str
    paper_id: str | None
    passage: str
    checks: list[Check] = field(default_factory=list)
    error: str = ""
    verdict: str = ""  # the model's stance when asked (`--verdict`): supported, contradicted, unstated

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.error:
            out.pop("error")
        return out


def read_claims(path: Path) -> Iterator[ClaimInput]:
    """Claims from a JSONL file; unusable lines come back with `error` set (file:line: why).
    Raises OSError/ValueError when the file itself cannot be read."""
    for lineno, row in json_objects(path):
        where = f"{path}:{lineno}"
        if isinstance(row, str):
            yield ClaimInput(f"line-{lineno}", "", error=f"{where}: {row}")
            continue
        cid = str(row.get("id", f"line-{lineno}"))
        claim, paper = row.get("claim"), row.get("paper_id")
        if not isinstance(claim, str) or not claim.strip():
            yield ClaimInput(cid, "", error=f"{where}: 'claim' must be a non-empty string")
        elif paper is not None and not isinstance(paper, str):
            yield ClaimInput(cid, claim, error=f"{where}: 'paper_id' must be a string")
        else:
            yield ClaimInput(cid, claim.strip(), paper or None)


class ClaimVerifier:
    """Checks claims against indexed abstracts; keeps each paper's sentence vectors once."""

    def __init__(self, store: Store, embedder: Embedder, trust: Trust, entail: Entail | None = None):
        """`entail`: the model's verdict, asked once the rule checks pass (it then judges negation
        in place of the polarity check, as in answers)."""
        if entail is not None and "entailment" not in trust.checks:
            trust = trust.with_(checks=[*trust.checks, "entailment"])
        self.store, self.embedder, self.trust, self.entail = store, embedder, trust, entail
        self._evidence: dict[str, Any] = {}

    def _paper_for(self, claim: str) -> Paper | None:
        results = search(claim, self.store, self.embedder, k=1)
        return results[0].paper if results else None

    def check(self, item: ClaimInput, paper: Paper | None = None) -> ClaimResult:
        if item.error:
            return ClaimResult(item.id, False, "bad input", item.paper_id, "", error=item.error)
        if paper is None and item.paper_id:
            paper = self.store.papers([item.paper_id]).get(item.paper_id)
            if paper is None:
                error = f"unknown paper id {item.paper_id!r} (not in the index)"
                return ClaimResult(item.id, False, "bad input", item.paper_id, "", error=error)
        paper = paper or self._paper_for(item.claim)
        if paper is None:
            return ClaimResult(item.id, False, "the index is empty", None, "", error="the index is empty")
        if not has_claim(item.claim):
            return ClaimResult(item.id, False, "no claim to check", paper.id, "")
        if paper.id not in self._evidence:
            self._evidence[paper.id] = evidence_for(paper, self.embedder)
        ev = self._evidence[paper.id]
        vector = np.asarray(self.embedder.embed(item.claim), dtype=np.float32)
        verdict = self.trust.verify(item.claim, vector, ev, whole=True)
        failed = verdict.failed
        reason = "; ".join(c.detail for c in failed) if failed else "every check passed"
        passage = verdict.best.text if verdict.best else ""
        # The cascade: where the support judge is sure, the model is not asked.
        sure = any(c.name == "judge" and c.sure for c in verdict.checks)
        said = (
            self.entail(item.claim, verdict.passage, ev)
            if self.entail and verdict.passed and verdict.passage and not sure
            else None
        )
        if said is Stance.CONTRADICTED:
            reason = "the abstract says otherwise"
        elif said is Stance.UNSTATED:
            reason = "every check passed; the abstract does not address it"
        # A claim is verified when the abstract says it: one it does not address is not.
        supported = verdict.passed and said in (None, Stance.SUPPORTED)
        return ClaimResult(item.id, supported, reason, paper.id, passage, verdict.checks,
                           verdict=said.value if said else "")  # fmt: skip

    def check_all(self, items: Iterable[ClaimInput]) -> Iterator[ClaimResult]:
        for item in items:
            yield self.check(item)
