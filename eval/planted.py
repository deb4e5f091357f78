"""`python -m eval.planted`: are contradictions planted in right answers removed?

Each row of `eval/claims/planted-dev.jsonl` is a dev question, a draft the default model wrote for
it that was right, and the same draft with one sentence rewritten by hand into a contradiction of
the cited paper (eight kinds, five each). The pipeline answers the question with the planted draft
in place of the model's (the same retrieval and sources; the live model for every verdict) under
each checker (`CHECKERS`: the rules alone, the `verdict` stage, the per-sentence `entailment`
check), and reports per kind how often the planted sentence is not shown as checked (removed,
marked as doubted, or the whole answer refused), and how often the untouched draft keeps the
sentence it replaced. Writes `<out>/results.jsonl` item by item (a rerun resumes) and
`<out>/summary.md`. Run it alone: it times the verdict.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
from collections.abc import Iterator
from pathlib import Path

from eval.gold import read_jsonl
from eval.metrics import percentiles
from rag.answer.audit import is_audit
from rag.answer.citations import strip_markers
from rag.answer.pipeline import Pipeline
from rag.answer.prompts import SYSTEM_PROMPT
from rag.llm.base import LLM, Message
from rag.settings import Settings

PLANTED = Path(__file__).parent / "claims" / "planted-dev.jsonl"
# checker -> (the `verdict` stage runs, the per-sentence `entailment` check runs): the rules alone,
# the verdict in the answer's conversation, and the older verdict on each sentence in a prompt of
# its own (the two sentences of the cited abstract that match it best).
CHECKERS = {"rules": (False, False), "verdict": (True, False), "sentence": (False, True)}


class DraftLLM(LLM):
    """Writes the given draft for the answer's prompt; every verdict is the live model's."""

    backend = "planted"

    def __init__(self, live: LLM):
        self.live, self.draft, self.model = live, "", live.model

    def stream(
        self,
        messages: list[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.1,
        grammar: str | None = None,
    ) -> Iterator[str]:
        if grammar is None and messages[0]["content"] == SYSTEM_PROMPT and not is_audit(messages):
            yield self.draft
            return
        yield from self.live.stream(messages, max_tokens=max_tokens, temperature=temperature, grammar=grammar)


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", strip_markers(text).lower()))


def shown(answer, sentence: str) -> bool:
    """Whether the answer shows `sentence` (or a clause of it: a sentence may be split) as
    checked: not removed, and not marked as doubted by the verdict (`on_contradiction` "mark")."""
    if answer.abstained:
        return False
    wanted = _norm(sentence)
    return any(
        _norm(s.text) and _norm(s.text) in wanted and not s.doubted for s in answer.sentences if s.claim
    )


def run(rows: list[dict], out: Path, checkers: list[str]) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.jsonl"
    done = {(r["id"], r["checker"]) for r in read_jsonl(path)} if path.is_file() else set()
    base = Pipeline()
    llm = DraftLLM(base.llm())
    for checker in checkers:
        verdict, entail = CHECKERS[checker]
        stages = [s for s in base.settings.answer_stages if s != "verdict" or verdict]
        if verdict and "verdict" not in stages:
            stages.insert(stages.index("check") + 1, "verdict")
        checks = [*base.settings.trust.checks, *(["entailment"] if entail else [])]
        trust = base.settings.trust.model_copy(update={"checks": checks})
        settings = base.settings.model_copy(update={"answer_stages": stages, "trust": trust})
        pipeline = Pipeline(settings, store=base.store, embedder=base.embedder, llm=llm)
        for row in rows:
            if (row["id"], checker) in done:
                continue
            llm.draft = row["planted"]
            planted = pipeline.ask(row["question"])
            llm.draft = row["draft"]
            original = pipeline.ask(row["question"])
            result = {
                "id": row["id"], "kind": row["kind"], "checker": checker,
                "planted_removed": not shown(planted, row["planted_sentence"]),
                "planted_refused": planted.abstained,
                "original_kept": shown(original, row["original_sentence"]),
                "verdict_seconds": planted.timings.verdict,
                "removed": [s.why_not for s in planted.removed],
            }  # fmt: skip
            with path.open("a") as f:
                f.write(json.dumps(result) + "\n")
            print(
                f"{row['id']} {checker}: removed={result['planted_removed']} kept={result['original_kept']}"
            )
    return read_jsonl(path)


def table(results: list[dict]) -> list[str]:
    kinds = sorted({r["kind"] for r in results})
    head = ["checker", *kinds, "all planted removed", "originals kept", "verdict s p50 / p95"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for checker in CHECKERS:
        rows = [r for r in results if r["checker"] == checker]
        if not rows:
            continue
        by_kind = collections.defaultdict(list)
        for r in rows:
            by_kind[r["kind"]].append(r["planted_removed"])
        cells = [f"{sum(by_kind[k])}/{len(by_kind[k])}" for k in kinds]
        removed = sum(r["planted_removed"] for r in rows)
        kept = sum(r["original_kept"] for r in rows)
        seconds = [r["verdict_seconds"] for r in rows if r["verdict_seconds"] is not None]
        p = percentiles(seconds) if seconds else {}
        timing = f"{p.get('p50', 0):.2f} / {p.get('p95', 0):.2f}" if seconds else "—"
        cells += [f"{removed}/{len(rows)} ({removed / len(rows):.3f})", f"{kept}/{len(rows)}", timing]
        lines.append(f"| {checker} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/planted"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--checker", action="append", choices=list(CHECKERS), help="default: all")
    args = parser.parse_args()
    rows = read_jsonl(PLANTED)[: args.limit]
    Settings()  # the settings are read (and checked) before the model loads
    results = run(rows, args.out, args.checker or list(CHECKERS))
    lines = table(results)
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
