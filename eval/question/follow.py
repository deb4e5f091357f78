"""The follow-up decision on written conversations, beside the pronoun rule it replaced.

    python -m eval.question.follow FILE            # each turn after right answers (no model)
    python -m eval.question.follow FILE --live OUT # the real pipeline, turn after turn (resumes)

Without `--live` every earlier turn is taken as answered right (its paper cited, its survey's papers
listed): the decision is judged alone. With it, the real pipeline answers each conversation turn by
turn (default model, the index of the settings) and each turn's reading, cited papers and answer
are written to OUT as they come; the report says whether each follow-up's answer cites the paper
it points at and whether a question that stands alone was bound to an earlier paper."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from eval.question.conversations import asked, load
from rag.question import FollowUp, read
from rag.question.conversation import Last


def decided(item, follow, reader) -> dict:
    intent = read(item.question, item.history, reader=reader, follow=follow)
    last = Last.of(item.history)
    bound = [p.id for p in intent.referents]
    if item.refers_to == "all":
        right_ref = len(bound) > 1 and set(bound) == {p.id for p in last.papers}
    else:
        right_ref = bound == [item.refers_to] if item.follows else not bound
    return {"id": f"{item.conversation}/{item.index}", "question": item.question, "follows": item.follows,
            "decided": intent.follows, "p": intent.follow_p, "why": intent.follow_why, "bound": bound,
            "refers_to": item.refers_to, "right_referent": right_ref}  # fmt: skip


def summary(rows: Sequence[dict]) -> dict:
    fol = [r for r in rows if r["follows"]]
    alone = [r for r in rows if not r["follows"]]
    return {
        "turns": len(rows),
        "follow_ups_right": sum(r["decided"] for r in fol),
        "follow_ups": len(fol),
        "alone_right": sum(not r["decided"] for r in alone),
        "alone": len(alone),
        "alone_bound": sum(bool(r["bound"]) for r in alone),
        "referent_right": sum(r["right_referent"] for r in fol),
    }


def oracle(path: Path, follow: FollowUp | None, reader) -> list[dict]:
    return [decided(a, follow, reader) for a in asked(load(path))]


def live(path: Path, out: Path) -> None:
    """Each conversation through the real pipeline; one line per turn in OUT (resumes)."""
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings
    from rag.types import Turn

    done = (
        {json.loads(line)["conversation"] for line in out.read_text().splitlines()} if out.exists() else set()
    )
    pipeline = Pipeline(Settings())
    for conv in load(path):
        if conv["id"] in done:
            continue
        history: list[Turn] = []
        lines = []
        for i, t in enumerate(conv["turns"]):
            answer = pipeline.ask(t["question"], history=history)
            intent = answer.intent
            lines.append({"conversation": conv["id"], "index": i, "question": t["question"], "truth": t,
                          "follows": bool(intent and intent.follows), "p": intent.follow_p if intent else None,
                          "about": intent.about.id if intent and intent.about else None,
                          "referents": [p.id for p in intent.referents] if intent else [],
                          "cited": sorted({c.paper_id for c in answer.citations}),
                          "listed": [h.paper.id for h in answer.papers], "answer": answer.text,
                          "abstained": answer.abstained, "seconds": answer.timings.total})  # fmt: skip
            history.append(Turn(t["question"], answer))
        with out.open("a") as f:
            f.writelines(json.dumps(line) + "\n" for line in lines)
        print(conv["id"], "done", flush=True)


def live_summary(out: Path) -> dict:
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    later = [r for r in rows if r["index"] > 0]
    fol = [r for r in later if r["truth"]["follows"]]
    alone = [r for r in later if not r["truth"]["follows"]]

    def cites(r) -> bool:
        ref = r["truth"]["refers_to"]
        shown = set(r["cited"]) | set(r["listed"])
        return bool(shown & set(r["referents"])) if ref == "all" else ref in shown

    return {
        "conversations": len({r["conversation"] for r in rows}),
        "follow_ups_right": sum(r["follows"] for r in fol),
        "follow_ups": len(fol),
        "follow_ups_citing_their_paper": sum(cites(r) for r in fol),
        "alone_right": sum(not r["follows"] for r in alone),
        "alone": len(alone),
        "alone_bound_to_earlier_paper": sum(bool(r["referents"]) for r in alone),
    }


def others(paths: Sequence[Path]) -> list[dict]:
    """Questions written by others (gold and outside sets) as conversations: each follow-up item
    after its own first question, answered right; each other one-paper question after the item
    before it in its file (about another paper), where it must stand alone."""
    from eval.gold import normalized

    convs = []
    for path in paths:
        rows = [normalized(json.loads(line)) for line in Path(path).read_text().splitlines() if line.strip()]
        rows = [r for r in rows if r.get("papers") and r.get("type") != "survey"]
        for prev, row in zip(rows, rows[1:]):
            first = {"question": (row.get("history") or [prev["question"]])[0], "kind": "one_paper",
                     "paper": row["papers"][0] if row.get("history") else prev["papers"][0]}  # fmt: skip
            if not row.get("history") and first["paper"] in row["papers"]:
                continue  # the same paper twice: no way to tell a follow-up from a new question
            follows = bool(row.get("history"))
            second = {"question": row["question"], "kind": "one_paper", "paper": row["papers"][0],
                      "follows": follows, "refers_to": row["papers"][0] if follows else None}  # fmt: skip
            convs.append({"id": f"{Path(path).stem}:{row['id']}", "turns": [first, second]})
    return convs


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--live", help="answer with the real pipeline, writing each turn to this file")
    ap.add_argument("--report", action="store_true", help="with --live: only summarise what OUT holds")
    ap.add_argument("--others", action="store_true",
                    help="FILE is gold question files (comma-separated): each question after the one before it")  # fmt: skip
    args = ap.parse_args(argv)
    if args.live:
        if not args.report:
            live(Path(args.file), Path(args.live))
        print(json.dumps(live_summary(Path(args.live)), indent=1))
        return
    from eval.question.train_follow import meaning
    from rag.question.reader import question_reader

    reader = question_reader()
    learned = FollowUp.shipped(meaning=meaning())
    if args.others:
        convs = others([Path(f) for f in args.file.split(",")])
        rows = [decided(a, learned, reader) for a in asked(convs)]
        rule = [decided(a, None, reader) for a in asked(convs)]
    else:
        rows = oracle(Path(args.file), learned, reader)
        rule = oracle(Path(args.file), None, reader)
    print("decision:", json.dumps(summary(rows)))
    print("pronoun rule:", json.dumps(summary(rule)))
    for r in rows:
        if r["decided"] != r["follows"] or (r["follows"] and not r["right_referent"]):
            print(f"  wrong {r['id']}: follows={r['follows']} decided={r['decided']} p={r['p']:.2f} "
                  f"bound={r['bound']} truth={r['refers_to']} | {r['question']} ({r['why']})")  # fmt: skip


if __name__ == "__main__":
    main()
