"""How well the question parser reads "which papers ...?" however it is asked: on a set of
phrasings written by someone who had not read the parser, is the kind right (a list of papers on a
topic, or not), is the topic right, are the stated status and area right.

    python -m eval.phrasings eval/gold/phrasings/test.jsonl [--rules-only] [--out F]

A topic is right when its words (stemmed, parentheses and stop words aside) equal the gold
topic's or one of the accepted variants'. `--rules-only` reads with today's wording rules alone
(no trained reader): the line to beat.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from rag import text as tx
from rag.question import Kind, parse
from rag.question.said import STATUS_FORMS


def topic_key(topic: str) -> tuple[str, ...]:
    """The words that make a topic, for comparing two ways of writing it."""
    plain = re.sub(r"\([^)]*\)", " ", topic or "")
    return tuple(tx.keyword_terms(plain.replace("-", " ")))


def score(row: dict, reader=None) -> dict:
    intent = parse(row["question"], reader=reader)
    listed = intent.kind is Kind.SEVERAL_PAPERS
    gold_list = row["kind"] == "list"
    out = {"id": row["id"], "question": row["question"], "kind_right": listed == gold_list,
           "read_kind": intent.kind.value, "read_topic": intent.topic, "gold_topic": row.get("topic")}  # fmt: skip
    if not gold_list:
        return out
    wanted = {topic_key(t) for t in [row["topic"], *row.get("accept", [])]}
    out["topic_right"] = listed and topic_key(intent.topic) in wanted
    status = {s for v in intent.filters.get("status", ()) for s in [v]}
    if row.get("status"):
        out["status_right"] = status == set(STATUS_FORMS[row["status"]])
    else:
        out["status_right"] = not status
    if row.get("area"):
        out["area_right"] = bool(intent.filters.get("area"))
    return out


def summary(results: list[dict]) -> dict:
    lists = [r for r in results if "topic_right" in r]

    def share(rows: list[dict], key: str) -> str:
        rows = [r for r in rows if key in r]
        got = sum(bool(r[key]) for r in rows)
        return f"{got}/{len(rows)} ({got / len(rows):.3f})" if rows else "-"

    return {
        "kind right": share(results, "kind_right"),
        "kind right, list questions": share(lists, "kind_right"),
        "kind right, other questions": share([r for r in results if "topic_right" not in r], "kind_right"),
        "topic right, list questions": share(lists, "topic_right"),
        "status right, list questions": share(lists, "status_right"),
        "area found, list questions naming one": share(lists, "area_right"),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gold", type=Path)
    ap.add_argument("--rules-only", action="store_true", help="today's wording rules, no trained reader")
    ap.add_argument("--out", type=Path, help="write each question's reading here (JSONL)")
    ap.add_argument("--reader", type=Path, help="a reader's folder (default: the shipped one)")
    args = ap.parse_args(argv)
    reader = None
    if not args.rules_only:
        from rag.question.reader import READER, question_reader

        reader = question_reader(args.reader or READER)
    rows = [json.loads(line) for line in args.gold.read_text(encoding="utf-8").splitlines() if line.strip()]
    results = [score(r, reader) for r in rows]
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    print(f"| {'rules only' if args.rules_only else 'trained reader'} | |\n|---|---|")
    for k, v in summary(results).items():
        print(f"| {k} | {v} |")
    wrong = Counter(r["read_kind"] for r in results if not r["kind_right"])
    print("\nwrong kinds read as:", dict(wrong))


if __name__ == "__main__":
    main()
