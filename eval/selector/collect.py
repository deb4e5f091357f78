"""The selector's training data: dev items about trainable papers answered live, each answer's
signals and the outcome of each candidate (`python -m eval.selector.collect`).

Only items whose papers are trainable (the sha1 of every id ends in an even hex digit; an
unanswerable item's `about` paper too) are run; sealed sets are drawn from the others. Each item is
answered by today's pipeline with the verdict always asked (so its features are known), and
labelled: does the checked draft hold the gold facts with a gold paper cited, does the quote of the
question's paper's best sentence? An unanswerable item's right outcome is a refusal. One line per
item is appended to the output as soon as it is done, so a killed run resumes where it stopped.
The committed file holds ids, features and labels only; the texts go to `--texts` (not committed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from itertools import zip_longest
from pathlib import Path

from eval import metrics as m
from eval.gold import CONFERENCE_GOLD, GoldItem, load_gold
from eval.judge.answer_data import USERS

OUT = Path(__file__).parent / "data" / "dev-outcomes.jsonl"
SPLITS = {"dev-a": "a", "dev-b": "b", "test": "t"}  # the old test split was run once: it is dev now


def trainable(paper_id: str) -> bool:
    return hashlib.sha1(paper_id.encode()).hexdigest()[-1] in "02468ace"


def item_papers(item: GoldItem, about: dict[str, str]) -> list[str]:
    return item.papers or ([about[item.id]] if item.id in about else [])


def dev_items(gold: Path = CONFERENCE_GOLD) -> list[tuple[str, GoldItem]]:
    """(split letter, item) for every dev item whose papers are all trainable, the splits taken
    in turn (a run stopped early still holds some of each)."""
    out: list[tuple[str, GoldItem]] = []
    for name, letter in SPLITS.items():
        path = gold / f"{name}.jsonl"
        about = {
            r["id"]: r["about"] for r in map(json.loads, path.read_text().splitlines()) if r.get("about")
        }
        for item in load_gold([path]):
            papers = item_papers(item, about)
            if all(trainable(p) for p in papers):
                out.append((letter, item))
    by_split = [[t for t in out if t[0] == letter] for letter in SPLITS.values()]
    return [t for group in zip_longest(*by_split) for t in group if t is not None]


def users_items(path: Path = USERS) -> list[tuple[str, GoldItem]]:
    """The answer judge's questions written under the user briefs (not in the shipped judge's
    training data) as dev items: a near-miss is unanswerable about its paper, a follow-up keeps its
    first turn. Split "a" or "b" by the paper's dev half (eval.draw.split_of), so the halves hold
    whole papers; writers take turns (a run stopped early holds some of each brief)."""
    from eval.draw import split_of

    out = []
    for r in (json.loads(line) for line in path.read_text().splitlines() if line.strip()):
        kind = "unanswerable" if not r["answers"] else ("followup" if r.get("history") else "lookup")
        item = GoldItem(r["id"], r["question"], kind, r["facts"] if r["answers"] else [],
                        [r["paper_id"]] if r["answers"] else [], history=list(r.get("history", [])),
                        near_miss=not r["answers"])  # fmt: skip
        out.append((split_of(r["paper_id"])[-1], item))
    writers = [
        [t for t in out if t[1].id.split("-")[0] == w] for w in sorted({t[1].id.split("-")[0] for t in out})
    ]
    return [t for group in zip_longest(*writers) for t in group if t is not None]


def labels(item: GoldItem, selected: dict, cited: list[str]) -> dict[str, int]:
    """Whether each candidate holds the answer (for an unanswerable item: neither does)."""
    if not item.answerable:
        return {"draft_ok": 0, "quote_ok": 0}
    draft, quote = selected.get("draft", ""), selected.get("quote", "")
    ok_draft = bool(draft) and m.facts_cited(draft, item.facts, cited, item.papers, item.question) == 1.0
    quoted = [selected["quote_paper"]] if selected.get("quote_paper") else []
    ok_quote = bool(quote) and m.facts_cited(quote, item.facts, quoted, item.papers, item.question) == 1.0
    return {"draft_ok": int(ok_draft), "quote_ok": int(ok_quote)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--texts", type=Path, default=Path("reports/selector-dev/texts.jsonl"))
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument(
        "--users", action="store_true",
        help="the questions written under the user briefs (eval/judge/data/answer-questions-users.jsonl) "
        "instead of the dev gold items; write them to their own --out",
    )  # fmt: skip
    args = ap.parse_args(argv)
    from eval.runner import System
    from rag.answer.pipeline import Pipeline
    from rag.clikit import quiet_libraries
    from rag.settings import Settings

    quiet_libraries()
    logging.basicConfig(level=logging.WARNING)
    settings = Settings()
    settings = settings.model_copy(update={"select": settings.select.model_copy(update={"cascade": False})})
    pipeline = Pipeline(settings)
    system = System(pipeline)
    done = (
        {json.loads(line)["id"] for line in args.out.read_text().splitlines()}
        if args.out.is_file()
        else set()
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.texts.parent.mkdir(parents=True, exist_ok=True)
    todo = [(s, it) for s, it in (users_items() if args.users else dev_items()) if it.id not in done]
    todo = todo[: args.limit]
    print(f"{len(done)} done, {len(todo)} to run", file=sys.stderr)
    for n, (split, item) in enumerate(todo, 1):
        turns = system.history(item)
        answer = pipeline.ask(item.question, history=turns)
        selected = answer.selected or {}
        cited = sorted({c.paper_id for c in answer.citations})
        row = {"id": item.id, "split": split, "type": item.type, "answerable": item.answerable,
               "features": selected.get("features", {}), **labels(item, selected, cited),
               "seconds": round(answer.timings.total, 2), "error": bool(answer.error)}  # fmt: skip
        with args.out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        with args.texts.open("a") as f:
            f.write(json.dumps({"id": item.id, "question": item.question, "draft_text": answer.draft,
                                "draft": selected.get("draft", ""), "quote": selected.get("quote", ""),
                                "cited": cited}) + "\n")  # fmt: skip
        print(f"[{n}/{len(todo)}] {item.id} draft_ok={row['draft_ok']} quote_ok={row['quote_ok']} "
              f"{row['seconds']} s", file=sys.stderr, flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
