"""The survey list's one decision (`rag.search.decide`): its training rows, its training, and the
lists it would make, from the dev survey gold files.

    RAG_DATA_DIR=<conference index> python -m eval.survey_decider collect [--files F ...]
    python -m eval.survey_decider train [--fit-on F ...] [--precision 0.9]

`collect` runs each question's candidates and signals as a list is built at run time (every
candidate, its features, whether the gold list holds it) and appends them to a rows file, one
question at a time (a killed run resumes after the last question written). Rows hold paper ids and
numbers only, no text. `train` fits a logistic regression on the trainable papers' rows (sha1 of
the id ends in an even digit), scores every question's candidates out of fold (5 folds by
question: a question's list is never judged by a model that saw it), prints recall and precision
per gold file at each threshold, and writes the weights with the threshold: the lowest whose
macro precision over `--choose-on` (the dev halves) reaches `--precision` (else the best F1).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from eval.judge.corpus import trainable
from rag.search.decide import FEATURES, WEIGHTS, Decider

GOLD = Path(__file__).parent / "gold" / "conference"
DEV = ("survey-dev-a.jsonl", "survey-dev-b.jsonl", "survey-test.jsonl", "survey-sealed.jsonl",
       "survey-sealed-2.jsonl", "survey-sealed-3.jsonl", "survey-sealed-4.jsonl")  # fmt: skip
ROWS = Path(__file__).parent.parent / "reports" / "survey-decider-rows.jsonl"  # not committed: ~40 MB
THRESHOLDS = [round(t, 2) for t in np.arange(0.05, 0.96, 0.05)]


def collect(files: list[str], out: Path) -> None:
    from rag import filters as flt
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings

    pipeline = Pipeline(Settings())
    survey = pipeline.survey
    done = {json.loads(line)["item"] for line in out.read_text().splitlines()} if out.exists() else set()
    with out.open("a", encoding="utf-8") as fh:
        for name in files:
            for line in (GOLD / name).read_text(encoding="utf-8").splitlines():
                item = json.loads(line)
                if item["id"] in done:
                    continue
                intent = pipeline.parse(item["question"])
                gold = set(item["papers"])
                rows = []
                if intent.topic:
                    stored = survey.store.resolve(flt.combine(None, intent.filters))
                    found = survey.candidates(intent, stored)
                    rows = [(j.paper.id, x) for j, x in survey.signals(intent, stored, found)]
                record = {"item": item["id"], "file": name, "gold": sorted(gold),
                          "rows": [{"paper": p, "label": int(p in gold), "x": x} for p, x in rows]}  # fmt: skip
                fh.write(json.dumps(record) + "\n")
                fh.flush()
                print(
                    f"{item['id']}: {len(rows)} candidates, {sum(p in gold for p, _ in rows)}/{len(gold)} gold"
                )


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def matrix(rows: list[dict]) -> np.ndarray:
    return np.array([[r["x"][f] for f in FEATURES] for r in rows], dtype=np.float64)


def fit(items: list[dict], c: float = 1.0):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    rows = [r for it in items for r in it["rows"] if trainable(r["paper"])]
    x, y = matrix(rows), np.array([r["label"] for r in rows])
    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=c, max_iter=2000).fit(scaler.transform(x), y)
    return Decider(FEATURES, tuple(scaler.mean_), tuple(scaler.scale_), tuple(model.coef_[0]),
                   float(model.intercept_[0]), 0.5)  # fmt: skip


def out_of_fold(items: list[dict], fit_names: set[str], folds: int = 5) -> dict[str, list[float]]:
    """item id -> p of each of its candidates, from a model fitted on the other folds' items of
    `fit_names` files (a file outside them is scored by a model fitted on all of them)."""
    fitted = [it for it in items if it["file"] in fit_names]
    fold = {it["item"]: i % folds for i, it in enumerate(sorted(fitted, key=lambda it: it["item"]))}
    models = [fit([it for it in fitted if fold[it["item"]] != k]) for k in range(folds)]
    whole = fit(fitted)
    out = {}
    for it in items:
        model = models[fold[it["item"]]] if it["item"] in fold else whole
        out[it["item"]] = [model.p(r["x"]) for r in it["rows"]]
    return out


def lists(items: list[dict], ps: dict[str, list[float]], t: float) -> dict[str, tuple[float, float]]:
    """gold file -> (macro recall, macro precision) of the lists at threshold `t`."""
    by: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for it in items:
        gold = set(it["gold"])
        if not gold:
            continue
        listed = {r["paper"] for r, p in zip(it["rows"], ps[it["item"]]) if p >= t}
        hit = len(listed & gold)
        by[it["file"]].append((hit / len(gold), hit / len(listed) if listed else 0.0))
    return {f: (float(np.mean([r for r, _ in v])), float(np.mean([p for _, p in v]))) for f, v in by.items()}


def train(rows_path: Path, fit_files: list[str], choose_on: list[str], precision: float, out: Path) -> None:
    items = load(rows_path)
    ps = out_of_fold(items, set(fit_files))
    names = sorted({it["file"] for it in items})
    print("threshold | " + " | ".join(n.removeprefix("survey-").removesuffix(".jsonl") for n in names))
    chosen, best_f1 = None, (-1.0, 0.5)
    for t in THRESHOLDS:
        scores = lists(items, ps, t)
        print(f"{t:.2f} | " + " | ".join(f"{scores[n][0]:.3f} / {scores[n][1]:.3f}" for n in names))
        fitted = [scores[n] for n in names if n in choose_on]
        r, p = float(np.mean([s[0] for s in fitted])), float(np.mean([s[1] for s in fitted]))
        if chosen is None and p >= precision:
            chosen = t
        f1 = 2 * r * p / (r + p) if r + p else 0.0
        best_f1 = max(best_f1, (f1, t))
    threshold = chosen if chosen is not None else best_f1[1]
    decider = fit([it for it in items if it["file"] in fit_files])
    data = decider.to_json() | {
        "threshold": threshold,
        "trained": {"files": fit_files, "rows": str(rows_path.name)},
    }
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"threshold {threshold} ({'precision reached' if chosen is not None else 'best F1'}) -> {out}")
    for name, c in sorted(zip(FEATURES, decider.coef), key=lambda x: -abs(x[1])):
        print(f"  {name:20s} {c:+.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--files", nargs="+", default=list(DEV))
    c.add_argument("--out", type=Path, default=ROWS)
    t = sub.add_parser("train")
    t.add_argument("--rows", type=Path, default=ROWS)
    t.add_argument("--fit-on", nargs="+", default=list(DEV))
    t.add_argument("--precision", type=float, default=0.9)
    t.add_argument(
        "--choose-on",
        nargs="+",
        default=["survey-dev-a.jsonl", "survey-dev-b.jsonl"],
        help="the files whose macro precision sets the threshold (the dev halves)",
    )
    t.add_argument("--out", type=Path, default=WEIGHTS)
    args = ap.parse_args()
    if args.cmd == "collect":
        collect(args.files, args.out)
    else:
        train(args.rows, args.fit_on, args.choose_on, args.precision, args.out)


if __name__ == "__main__":
    main()
