"""Train the follow-up decision (rag/question/conversation.py) on written conversations about
trainable papers, and say how it does on wording it was not fitted on.

    python -m eval.question.train_follow [--data eval/question/data/conversations-train.jsonl]

Each writer's conversations are held out in turn (trained on the others): the table gives, per
held-out writer, how often the decision is right on true follow-ups and on questions that stand
alone, beside the pronoun rule it replaces; the control is the decision from the question's wording
alone (no feature of the last answer). Then it trains on every writer, takes the threshold that is
best on the held-out predictions (both ways at once: the lower of the two rates), and writes the
weights (rag/judge/weights/follow/follow.json)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import numpy as np

from eval.question.conversations import TRAIN, Asked, asked, load
from eval.selector.train import fit
from rag.question import conversation as cv
from rag.question.rules import parse

# The question's wording alone: the control (nothing of the last answer).
WORDING = ("pronoun", "paper_word", "pronoun_at", "named_before", "said_before", "names", "asks_paper", "listing", "words",
           "lead", "ordinal", "group", "the_one")  # fmt: skip


class Capture(cv.FollowUp):
    """Reads the features the decision would see, and decides nothing."""

    def __init__(self, meaning: cv.Meaning):
        super().__init__(model=None, meaning=meaning)  # type: ignore[arg-type]
        self.x: dict[str, float] = {}

    def bind(self, text, last, *, asks_paper, listing):
        self.x = self.features(text, last, asks_paper=asks_paper, listing=listing)[0]
        return cv.Binding(False)


def meaning() -> cv.Meaning:
    """The settings' embedder and index (the whole conference: the index users search)."""
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings

    pipeline = Pipeline(Settings())
    return cv.Meaning(pipeline.embedder, pipeline.store)


def rows(items: Sequence[Asked], meaning: cv.Meaning, reader) -> list[dict]:
    capture = Capture(meaning)
    out = []
    for a in items:
        intent = parse(a.question, a.history, reader=reader, follow=capture)
        out.append({"id": f"{a.conversation}/{a.index}", "writer": a.writer, "follows": a.follows,
                    "refers_to": a.refers_to, "features": dict(capture.x), "pronoun_rule": intent.refers_back})  # fmt: skip
    return out


def x_of(rs: Sequence[dict], names: Sequence[str]) -> np.ndarray:
    return np.array([[r["features"].get(n, 0.0) for n in names] for r in rs], dtype=float)


def rates(p: np.ndarray, y: np.ndarray, threshold: float) -> tuple[float, float]:
    """(right on follow-ups, right on questions that stand alone)."""
    said = p >= threshold
    return float((said[y == 1]).mean()), float((~said[y == 0]).mean())


def held_out(rs: list[dict], names: Sequence[str], c: float) -> np.ndarray:
    """Each writer's p from a decision trained on the other writers."""
    p = np.zeros(len(rs))
    for w in sorted({r["writer"] for r in rs}):
        train = [r for r in rs if r["writer"] != w]
        model = fit(x_of(train, names), np.array([r["follows"] for r in train], dtype=int), names, c)
        for i, r in enumerate(rs):
            if r["writer"] == w:
                p[i] = model.p(r["features"])
    return p


def best_threshold(p: np.ndarray, y: np.ndarray) -> float:
    grid = np.round(np.arange(0.2, 0.81, 0.02), 2)
    return float(max(grid, key=lambda t: (min(rates(p, y, t)), sum(rates(p, y, t)))))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(TRAIN))
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--rows", default="reports/follow-rows.json", help="cache of the feature rows")
    args = ap.parse_args(argv)
    from pathlib import Path

    from rag.question.reader import question_reader

    cache = Path(args.rows)
    if cache.exists() and json.loads(cache.read_text()).get("data") == args.data:
        rs = json.loads(cache.read_text())["rows"]
    else:
        rs = rows(list(asked(load(Path(args.data)))), meaning(), question_reader())
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"data": args.data, "rows": rs}))
    y = np.array([r["follows"] for r in rs], dtype=int)
    p = held_out(rs, cv.FEATURES, args.c)
    control = held_out(rs, WORDING, args.c)
    t = best_threshold(p, y)
    rule = np.array([float(r["pronoun_rule"]) for r in rs])
    print(
        f"{len(rs)} turns ({int(y.sum())} follow-ups) from {len({r['id'].split('/')[0] for r in rs})} conversations"
    )
    print("held-out writer | n | decision: follow-ups / stand alone | wording only | pronoun rule")
    for w in sorted({r["writer"] for r in rs}):
        m = np.array([r["writer"] == w for r in rs])
        d, c0, pr = rates(p[m], y[m], t), rates(control[m], y[m], t), rates(rule[m], y[m], 0.5)
        print(
            f"{w} | {m.sum()} | {d[0]:.2f} / {d[1]:.2f} | {c0[0]:.2f} / {c0[1]:.2f} | {pr[0]:.2f} / {pr[1]:.2f}"
        )
    d, c0, pr = rates(p, y, t), rates(control, y, t), rates(rule, y, 0.5)
    print(
        f"all | {len(rs)} | {d[0]:.2f} / {d[1]:.2f} | {c0[0]:.2f} / {c0[1]:.2f} | {pr[0]:.2f} / {pr[1]:.2f}"
    )
    from sklearn.metrics import roc_auc_score

    print(
        f"AUC held out {roc_auc_score(y, p):.3f}; wording only {roc_auc_score(y, control):.3f}; threshold {t}"
    )
    model = fit(x_of(rs, cv.FEATURES), y, cv.FEATURES, args.c)
    cv.WEIGHTS.parent.mkdir(parents=True, exist_ok=True)
    cv.WEIGHTS.write_text(json.dumps({"model": model.to_json(), "threshold": t, "turns": len(rs),
                                      "trained_on": Path(args.data).name}, indent=1) + "\n")  # fmt: skip
    print(f"wrote {cv.WEIGHTS}")


if __name__ == "__main__":
    main()
