"""Markdown tables of metric values, shared by the evaluation report and its sections."""

from __future__ import annotations

from collections.abc import Sequence


def fmt(key: str, value: float | None) -> str:
    if value is None:
        return "—"
    if key in ("answer_words", "prompt_tokens", "cached_tokens"):
        return f"{value:.1f}"
    if key.endswith(("_p50", "_p95")):
        return f"{value:.2f} s"
    if key in ("items", "errors"):
        return str(int(value))
    return f"{value:.3f}"


def table(rows: dict[str, dict[str, float | None]], keys: Sequence[str], first: str = "config") -> list[str]:
    lines = [f"| {first} | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for name, vals in rows.items():
        lines.append(f"| {name} | " + " | ".join(fmt(k, vals.get(k)) for k in keys) + " |")
    return lines
