"""The real-conference splits, and dev's two halves side by side.

- dev-a: the first dev split (`dev-a.jsonl`, `survey-dev-a.jsonl`);
- dev-b: the first test split, run once and then folded into dev (`dev-b.jsonl`, ...);
- dev: both halves; a change is kept only if it helps, or does not hurt, each half;
- test: the sealed split on papers drawn afresh (`python -m eval.draw --fresh`), run once at the end.

`citewise eval --split dev --halves` prints each half's numbers beside the other's, with the gap:
a change that helps one half and hurts the other is fitting, not progress.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from eval.gold import CONFERENCE_GOLD, read_jsonl
from eval.runner import ItemResult

HALVES = ("dev-a", "dev-b")
SPLITS: dict[str, tuple[str, ...]] = {
    "dev-a": ("dev-a",),
    "dev-b": ("dev-b",),
    "dev": HALVES,
    "test": ("test",),
}
# Shown side by side; the rest of a run's metrics stay in its report.
KEYS = ("facts_cited", "fact_recall", "citation_precision", "refused_unanswerable", "refused_answerable",
        "list_recall", "list_precision", "hit@5")  # fmt: skip


def gold_files(split: str) -> list[Path]:
    """The gold files of a split name; `ValueError` names the known ones."""
    if split not in SPLITS:
        raise ValueError(f"--split is one of {', '.join(SPLITS)}, not {split!r}")
    return [CONFERENCE_GOLD / f"{kind}{part}.jsonl" for part in SPLITS[split] for kind in ("", "survey-")]


def half_of(folder: Path = CONFERENCE_GOLD) -> dict[str, str]:
    """Item id -> the dev half its file belongs to."""
    return {
        row["id"]: half
        for half in HALVES
        for kind in ("", "survey-")
        for row in read_jsonl(folder / f"{kind}{half}.jsonl")
    }


def side_by_side(results: Sequence[ItemResult], halves: dict[str, str]) -> list[str]:
    """One Markdown table per config: each half's value of KEYS and the gap (b minus a)."""
    from eval.report import summarize
    from eval.tables import fmt

    lines: list[str] = []
    for config in dict.fromkeys(r.config for r in results):
        mine = [r for r in results if r.config == config]
        per = {h: summarize([r for r in mine if halves.get(r.id) == h]) for h in HALVES}
        counts = {h: sum(halves.get(r.id) == h for r in mine) for h in HALVES}
        lines += [f"### {config}", "", f"| metric | dev-a ({counts['dev-a']}) | dev-b ({counts['dev-b']}) | gap |",
                  "|---|---|---|---|"]  # fmt: skip
        for key in KEYS:
            a, b = per["dev-a"].get(key), per["dev-b"].get(key)
            gap = f"{b - a:+.3f}" if a is not None and b is not None else "—"
            lines.append(f"| {key} | {fmt(key, a)} | {fmt(key, b)} | {gap} |")
        lines.append("")
    return lines
