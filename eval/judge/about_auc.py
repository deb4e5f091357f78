"""How well a membership judge tells papers about a topic from the rest, on pairs it was not
trained on: `python -m eval.judge.about_auc PAIRS [--judge FOLDER] [--topic-only]`.

PAIRS come from `python -m eval.judge.about_data --files survey-dev-b.jsonl --every-paper --out P`.
Prints the AUC of p(about) within each question (mean), and pooled: listed papers above every
other candidate, above those dense search offered, and above passing mentions (papers the list's author read and left out). `--topic-only`
scores the question without the paper: the control of a judge trained with `train_about
--topic-only`, which must sit near 0.5.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval.judge.answers import auc
from eval.judge.train_about import examples
from rag.judge.answer import ABOUT, AboutJudge


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", type=Path)
    ap.add_argument("--judge", type=Path, default=ABOUT, help="an exported judge folder")
    ap.add_argument("--topic-only", action="store_true", help="score the question without the paper")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.pairs.read_text().splitlines() if line.strip()]
    judge = AboutJudge(args.judge)
    pairs = [(question, text) for question, text, _label in examples(rows, args.topic_only)]
    p = [float(x) for x in judge.model.probabilities(pairs)[:, 0]]
    listed = [x for x, r in zip(p, rows) if r["label"] == "about"]
    other = {k: [x for x, r in zip(p, rows) if r["kind"] == k] for k in ("passing", "words", "dense")}
    every = [x for x, r in zip(p, rows) if r["label"] != "about"]
    print(f"{args.judge}: {len(listed)} listed, {len(every)} other")
    # Within one question: a judge that reads only the question gives all its candidates one
    # score, so here the control sits at 0.5 exactly and only reading the paper can win.
    by_question: dict[str, tuple[list[float], list[float]]] = {}
    for x, r in zip(p, rows):
        pos, neg = by_question.setdefault(r["item"], ([], []))
        (pos if r["label"] == "about" else neg).append(x)
    within = [auc(pos, neg) for pos, neg in by_question.values() if pos and neg]
    print(f"AUC within a question, mean over {len(within)} questions: {sum(within) / len(within):.3f}")
    print(f"AUC listed > every other {auc(listed, every):.3f}; > dense {auc(listed, other['dense']):.3f}; "
          f"> topic words {auc(listed, other['words']):.3f}; > passing mentions {auc(listed, other['passing']):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
