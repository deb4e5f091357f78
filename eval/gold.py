"""Gold question/answer items: the schema, and a loader that checks it with clear errors.

One JSON object per line. `facts` lists what a correct answer must contain; each fact is a string
or a list of accepted variants. `papers` are index paper ids (the OpenReview id for seed papers).
A `followup` item carries the earlier user turns in `history`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

TYPES = (
    "lookup",
    "numeric",
    "paraphrase",
    "multi",
    "followup",
    "twopart",
    "whichpaper",
    "comparison",
    "survey",
    "unanswerable",
)
REQUIRED = ("id", "question", "type", "facts", "papers")
GOLD = Path(__file__).parent / "gold"
# The seed regression set (dev.jsonl + test.jsonl, eval/split.py): the index `make run` builds.
DEFAULT_GOLD = GOLD / "seeds"
# The real conference, split by paper (eval/draw.py): dev.jsonl, test.jsonl, survey-dev.jsonl, survey-test.jsonl.
CONFERENCE_GOLD = GOLD / "conference"


class GoldError(ValueError):
    """A gold file breaks the schema; the message names the file and line."""


@dataclass
class GoldItem:
    id: str
    question: str
    type: str
    facts: list[list[str]]  # each fact: its accepted variants
    papers: list[str]
    answer: str = ""
    history: list[str] = field(default_factory=list)
    near_miss: bool = False
    filter: dict = field(default_factory=dict)  # survey items: the status or area the question states

    @property
    def answerable(self) -> bool:
        return self.type != "unanswerable"


def _fact_variants(value: object, where: str) -> list[str]:
    variants = [value] if isinstance(value, str) else value
    if (
        not isinstance(variants, list)
        or not variants
        or not all(isinstance(v, str) and v.strip() for v in variants)
    ):
        raise GoldError(f"{where}: each fact must be a non-empty string or a list of them, got {value!r}")
    return variants


# Sets written by others (../shared/data/outside/) name a few fields and types their own way.
_OUTSIDE_KEYS = {"answer_any": "facts", "paper_ids": "papers"}
_OUTSIDE_TYPES = {"which_paper": "whichpaper", "two-part": "twopart", "follow-up": "followup"}


def normalized(row: dict) -> dict:
    """A row in the project's schema: the outside sets' keys and type names read as ours, an
    unanswerable item's missing facts and papers empty, its `near` paper its `about`."""
    out = {_OUTSIDE_KEYS.get(k, k): v for k, v in row.items()}
    out["type"] = _OUTSIDE_TYPES.get(out.get("type"), out.get("type"))
    if out.get("type") == "unanswerable":
        out.setdefault("facts", [])
        out.setdefault("papers", [])
        near = out.pop("near", None)
        if near and not out.get("about"):
            out["about"] = near[0] if isinstance(near, list) else near
    return out


def parse_item(row: object, where: str, known_papers: set[str] | None = None) -> GoldItem:
    if not isinstance(row, dict):
        raise GoldError(f"{where}: expected a JSON object")
    row = normalized(row)
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise GoldError(f"{where}: missing field(s) {', '.join(missing)}")
    if row["type"] not in TYPES:
        raise GoldError(f"{where}: unknown type {row['type']!r} (one of {', '.join(TYPES)})")
    if not isinstance(row["question"], str) or not row["question"].strip():
        raise GoldError(f"{where}: empty question")
    if not isinstance(row["papers"], list) or not isinstance(row["facts"], list):
        raise GoldError(f"{where}: 'papers' and 'facts' must be lists")
    facts = [_fact_variants(f, where) for f in row["facts"]]
    answerable = row["type"] != "unanswerable"
    if answerable and not row["papers"]:
        raise GoldError(f"{where}: an answerable item needs at least one gold paper")
    if answerable and row["type"] != "survey" and not facts:
        raise GoldError(f"{where}: an answerable item needs at least one fact (a survey item, the papers)")
    if not answerable and facts:
        raise GoldError(f"{where}: an unanswerable item has no facts")
    if row["type"] == "followup" and not row.get("history"):
        raise GoldError(f"{where}: a followup item needs 'history' (the earlier questions)")
    if known_papers is not None:
        unknown = [p for p in row["papers"] if p not in known_papers]
        if unknown:
            raise GoldError(f"{where}: unknown paper id(s) {', '.join(unknown)} (not in the index)")
    return GoldItem(
        id=str(row["id"]),
        question=row["question"],
        type=row["type"],
        facts=facts,
        papers=list(row["papers"]),
        answer=row.get("answer", ""),
        history=list(row.get("history", [])),
        near_miss=bool(row.get("near_miss", False)),
        filter=dict(row.get("filter") or {}),
    )


def read_jsonl(path: Path) -> list[dict]:
    """The objects of a JSONL file the project wrote itself (results, claims, split halves)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_gold(paths: Iterable[Path], known_papers: set[str] | None = None) -> list[GoldItem]:
    """Read gold JSONL files; raise `GoldError` at the first broken line or a repeated id."""
    items: list[GoldItem] = []
    seen: dict[str, str] = {}
    for path in paths:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if not files:
            raise GoldError(f"{path}: no .jsonl gold files")
        for file in files:
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise GoldError(f"{file}: cannot read ({exc})") from exc
            for lineno, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                where = f"{file}:{lineno}"
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise GoldError(f"{where}: not valid JSON ({exc.msg})") from exc
                item = parse_item(row, where, known_papers)
                if item.id in seen:
                    raise GoldError(f"{where}: id {item.id!r} already used at {seen[item.id]}")
                seen[item.id] = where
                items.append(item)
    return items
