"""Train the answer selector on dev outcomes and ship it (`python -m eval.selector.train`).

Reads eval/selector/data/dev-outcomes.jsonl (eval/selector/collect.py), fits three logistic
regressions (p(the sources answer), p(draft answers), p(quote answers)) on standardized features,
chooses the one threshold on out-of-fold predictions (the highest with answerable refused <=
`--max-refused`),
and writes rag/judge/weights/selector/selector.json. It also prints, out of fold:
  - each half trained on the other (dev-a / dev-b; the old test split always trains),
  - the control: the same selector on the question-side features only (must do clearly worse),
  - each rule feature dropped in turn (a rule that changes nothing on both halves is retired).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from eval.selector.collect import OUT
from rag.answer.select.selector import WEIGHTS, Logistic, Outcome, Selector, quote_wins
from rag.answer.select.signals import QUESTION_SIDE

FOLDS = 5
C_GRID = (0.1, 0.3, 1.0, 3.0)


def load(path: Path = OUT) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def feature_names(rows: Sequence[dict]) -> list[str]:
    return sorted({k for r in rows for k in r["features"]})


def matrix(rows: Sequence[dict], names: Sequence[str]) -> np.ndarray:
    return np.array([[r["features"].get(n, 0.0) for n in names] for r in rows], dtype=float)


def fit(x: np.ndarray, y: np.ndarray, names: Sequence[str], c: float) -> Logistic:
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    if len(set(y.tolist())) < 2:  # one class only: a constant p
        p = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
        return Logistic(
            tuple(names), tuple(mean), tuple(scale), (0.0,) * len(names), float(np.log(p / (1 - p)))
        )
    model = LogisticRegression(C=c, max_iter=2000).fit((x - mean) / scale, y)
    return Logistic(tuple(names), tuple(mean.tolist()), tuple(scale.tolist()),
                    tuple(model.coef_[0].tolist()), float(model.intercept_[0]))  # fmt: skip


Preds = tuple[float, float, float]  # p(the sources answer), p(draft answers), p(quote answers)


def fit_models(rows: Sequence[dict], names: Sequence[str], c: float) -> tuple[Logistic, Logistic, Logistic]:
    x = matrix(rows, names)
    return tuple(fit(x, np.array([int(r[k]) for r in rows]), names, c)
                 for k in ("answerable", "draft_ok", "quote_ok"))  # type: ignore[return-value]  # fmt: skip


def predict(models: Sequence[Logistic], row: dict) -> Preds:
    return tuple(m.p(row["features"]) for m in models)  # type: ignore[return-value]


def out_of_fold(rows: list[dict], names: Sequence[str], c: float, seed: int = 0) -> list[Preds]:
    """Each row's predictions from a selector trained without its fold."""
    order = np.random.default_rng(seed).permutation(len(rows))
    preds: list[Preds] = [(0.0, 0.0, 0.0)] * len(rows)
    for k in range(FOLDS):
        held = set(order[k::FOLDS].tolist())
        models = fit_models([r for i, r in enumerate(rows) if i not in held], names, c)
        for i in held:
            preds[i] = predict(models, rows[i])
    return preds


def outcomes(rows: Sequence[dict], preds: Sequence[Preds], t: float) -> dict[str, float]:
    """The measures of choosing at threshold t: answerable refused, unanswerable refused, facts cited."""
    ans = [(r, p) for r, p in zip(rows, preds) if r["answerable"]]
    una = [(r, p) for r, p in zip(rows, preds) if not r["answerable"]]

    def chosen(p: Preds) -> Outcome:
        return Outcome.REFUSE if p[0] < t else Outcome.QUOTE if quote_wins(p[1], p[2]) else Outcome.DRAFT

    right = sum(
        r["draft_ok"] if chosen(p) is Outcome.DRAFT else r["quote_ok"] if chosen(p) is Outcome.QUOTE else 0
        for r, p in ans
    )
    return {
        "answerable_refused": sum(chosen(p) is Outcome.REFUSE for _, p in ans) / max(1, len(ans)),
        "unanswerable_refused": sum(chosen(p) is Outcome.REFUSE for _, p in una) / max(1, len(una)),
        "facts_cited": right / max(1, len(ans)),
    }


def choose_threshold(rows, preds, max_refused: float) -> float:
    """The highest threshold whose answerable refusals stay within `max_refused`."""
    grid = np.round(np.arange(0.01, 0.96, 0.01), 2)
    ok = [t for t in grid if outcomes(rows, preds, t)["answerable_refused"] <= max_refused]
    return float(max(ok)) if ok else 0.01


def auc(rows: Sequence[dict], preds: Sequence[Preds]) -> float:
    """AUC of p(the sources answer) for answerable against unanswerable items."""
    from sklearn.metrics import roc_auc_score

    y = [int(r["answerable"]) for r in rows]
    return float(roc_auc_score(y, [p[0] for p in preds])) if len(set(y)) == 2 else float("nan")


def halves(rows: list[dict], names: Sequence[str], c: float, t: float) -> dict[str, dict]:
    """Each dev half judged by a selector trained on everything else."""
    out = {}
    for half in ("a", "b"):
        train = [r for r in rows if r["split"] != half]
        test = [r for r in rows if r["split"] == half]
        models = fit_models(train, names, c)
        preds = [predict(models, r) for r in test]
        out[half] = outcomes(test, preds, t) | {"auc": auc(test, preds), "n": len(test)}
    return out


def adds_something(with_: dict, without: dict) -> bool:
    """A feature earns its place when leaving it out makes either half worse on any measure."""
    for half in ("a", "b"):
        w, wo = with_[half], without[half]
        if (
            wo["auc"] < w["auc"] - 0.005
            or wo["facts_cited"] < w["facts_cited"]
            or wo["unanswerable_refused"] < w["unanswerable_refused"]
            or wo["answerable_refused"] > w["answerable_refused"]
        ):
            return True
    return False


def report(rows: list[dict], names: list[str], c: float, t: float) -> dict:
    full = out_of_fold(rows, names, c)
    control_names = [n for n in names if n in QUESTION_SIDE]
    control = out_of_fold(rows, control_names, c)
    both = halves(rows, names, c, t)
    rules = {}
    for rule in [n for n in names if n.startswith("rule_")]:
        kept = [n for n in names if n != rule]
        rules[rule] = {h: v for h, v in halves(rows, kept, c, t).items()}
    return {
        "out_of_fold": outcomes(rows, full, t) | {"auc": auc(rows, full)},
        "control_question_only": outcomes(rows, control, t) | {"auc": auc(rows, control)},
        "halves": both,
        "without_rule": rules,
        "rules_adding_nothing": sorted(r for r, h in rules.items() if not adds_something(both, h)),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=OUT)
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--c", type=float, default=None,
                    help="inverse L2 strength of the regressions (default: the best out-of-fold AUC of 0.1, 0.3, 1, 3)")  # fmt: skip
    ap.add_argument("--max-refused", type=float, default=0.03)
    ap.add_argument("--drop", action="append", default=[], help="a feature left out (repeatable)")
    args = ap.parse_args(argv)
    rows = [r for r in load(args.data) if not r.get("error")]
    names = [n for n in feature_names(rows) if n not in args.drop]
    if args.c is None:
        args.c = max(C_GRID, key=lambda c: auc(rows, out_of_fold(rows, names, c)))
    preds = out_of_fold(rows, names, args.c)
    t = choose_threshold(rows, preds, args.max_refused)
    measures = report(rows, names, args.c, t)
    selector = Selector(*fit_models(rows, names, args.c), threshold=t)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "threshold": t, "trained_on": f"{args.data.name}: {len(rows)} dev items about trainable papers",
        "c": args.c, "max_refused": args.max_refused, "answers": selector.answers.to_json(),
        "draft": selector.draft.to_json(),
        "quote": selector.quote.to_json(), "measures": measures}, indent=1) + "\n")  # fmt: skip
    print(
        json.dumps({"threshold": t, **{k: v for k, v in measures.items() if k != "without_rule"}}, indent=1)
    )
    for rule, h in measures["without_rule"].items():
        print(rule, {k: {m: round(v, 3) for m, v in d.items()} for k, d in h.items()})


if __name__ == "__main__":
    main()
