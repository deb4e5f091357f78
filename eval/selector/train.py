"""Train the answer selector on dev outcomes and ship it (`python -m eval.selector.train`).

Reads eval/selector/data/dev-outcomes.jsonl (eval/selector/collect.py), fits two logistic
regressions (p(draft answers), p(quote answers)) on standardized features, chooses the one
threshold on out-of-fold predictions (the highest with answerable refused <= `--max-refused`),
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
from rag.answer.select.selector import WEIGHTS, Logistic, Outcome, Selector
from rag.answer.select.signals import QUESTION_SIDE

FOLDS = 5


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


def fit_pair(rows: Sequence[dict], names: Sequence[str], c: float) -> tuple[Logistic, Logistic]:
    x = matrix(rows, names)
    return (fit(x, np.array([r["draft_ok"] for r in rows]), names, c),
            fit(x, np.array([r["quote_ok"] for r in rows]), names, c))  # fmt: skip


def out_of_fold(rows: list[dict], names: Sequence[str], c: float, seed: int = 0) -> list[tuple[float, float]]:
    """Each row's (p_draft, p_quote) from a selector trained without its fold."""
    order = np.random.default_rng(seed).permutation(len(rows))
    preds: list[tuple[float, float]] = [(0.0, 0.0)] * len(rows)
    for k in range(FOLDS):
        held = set(order[k::FOLDS].tolist())
        draft, quote = fit_pair([r for i, r in enumerate(rows) if i not in held], names, c)
        for i in held:
            preds[i] = (draft.p(rows[i]["features"]), quote.p(rows[i]["features"]))
    return preds


def outcomes(rows: Sequence[dict], preds: Sequence[tuple[float, float]], t: float) -> dict[str, float]:
    """The measures of choosing at threshold t: answerable refused, unanswerable refused, facts cited."""
    ans = [(r, p) for r, p in zip(rows, preds) if r["answerable"]]
    una = [(r, p) for r, p in zip(rows, preds) if not r["answerable"]]

    def chosen(p: tuple[float, float]) -> Outcome:
        return Outcome.DRAFT if p[0] >= t else Outcome.QUOTE if p[1] >= t else Outcome.REFUSE

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


def auc(rows: Sequence[dict], preds: Sequence[tuple[float, float]]) -> float:
    """AUC of max(p_draft, p_quote) for 'some candidate answers' against 'refuse'."""
    from sklearn.metrics import roc_auc_score

    y = [int(r["draft_ok"] or r["quote_ok"]) for r in rows]
    return float(roc_auc_score(y, [max(p) for p in preds])) if len(set(y)) == 2 else float("nan")


def halves(rows: list[dict], names: Sequence[str], c: float, t: float) -> dict[str, dict]:
    """Each dev half judged by a selector trained on everything else."""
    out = {}
    for half in ("a", "b"):
        train = [r for r in rows if r["split"] != half]
        test = [r for r in rows if r["split"] == half]
        draft, quote = fit_pair(train, names, c)
        preds = [(draft.p(r["features"]), quote.p(r["features"])) for r in test]
        out[half] = outcomes(test, preds, t) | {"auc": auc(test, preds), "n": len(test)}
    return out


def report(rows: list[dict], names: list[str], c: float, t: float) -> dict:
    full = out_of_fold(rows, names, c)
    control_names = [n for n in names if n in QUESTION_SIDE]
    control = out_of_fold(rows, control_names, c)
    rules = {}
    for rule in [n for n in names if n.startswith("rule_")]:
        kept = [n for n in names if n != rule]
        rules[rule] = {h: v for h, v in halves(rows, kept, c, t).items()}
    return {
        "out_of_fold": outcomes(rows, full, t) | {"auc": auc(rows, full)},
        "control_question_only": outcomes(rows, control, t) | {"auc": auc(rows, control)},
        "halves": halves(rows, names, c, t),
        "without_rule": rules,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=OUT)
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--c", type=float, default=0.5, help="inverse L2 strength of the regressions")
    ap.add_argument("--max-refused", type=float, default=0.03)
    ap.add_argument("--drop", action="append", default=[], help="a feature left out (repeatable)")
    args = ap.parse_args(argv)
    rows = [r for r in load(args.data) if not r.get("error")]
    names = [n for n in feature_names(rows) if n not in args.drop]
    preds = out_of_fold(rows, names, args.c)
    t = choose_threshold(rows, preds, args.max_refused)
    measures = report(rows, names, args.c, t)
    draft, quote = fit_pair(rows, names, args.c)
    selector = Selector(draft, quote, t)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "threshold": t, "trained_on": f"{args.data.name}: {len(rows)} dev items about trainable papers",
        "c": args.c, "max_refused": args.max_refused, "draft": selector.draft.to_json(),
        "quote": selector.quote.to_json(), "measures": measures}, indent=1) + "\n")  # fmt: skip
    print(
        json.dumps({"threshold": t, **{k: v for k, v in measures.items() if k != "without_rule"}}, indent=1)
    )
    for rule, h in measures["without_rule"].items():
        print(rule, {k: {m: round(v, 3) for m, v in d.items()} for k, d in h.items()})


if __name__ == "__main__":
    main()
