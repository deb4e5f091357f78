"""Train the answer judge and ship it: `python -m eval.judge.train_answer` (about 25 minutes on 2
cores).

From `eval/judge/data/answer-pairs.jsonl` (`python -m eval.judge.answer_data`): each pair's question
and sentence (with its paper's title, `rag.judge.answer.shown`) train a cross-encoder started from
the shipped all-MiniLM-L6-v2 weights with a 2-class head ("answers", "other"), exported as int8
ONNX with its sha256 to `rag/judge/weights/answer/`. `--question-only` trains the control (the
question without the sentence) into a scratch folder instead: it must score near chance.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from eval.judge.answer_data import PAIRS, USERS, materialize
from eval.judge.train import export, train
from rag.judge.answer import ANSWER, LABELS

MAX_LENGTH = 128  # word pieces: a question, a title and one sentence
EPOCHS = 2.0
LR = 4e-5
# About one pair in ten answers; twice over, the judge sees one in five (a judge that never says
# "answers" is wrong one time in ten, and learns little from the loss).
POSITIVE_COPIES = 2


def examples(rows: list[dict], question_only: bool = False) -> list[tuple[str, str, int]]:
    """(question, text, class index) for each row, an answering pair `POSITIVE_COPIES` times;
    class 0 is "answers"."""
    out = []
    for row in rows:
        question, text, label = materialize(row)
        pair = (question, "" if question_only else text, LABELS.index("answers" if label else "other"))
        out += [pair] * (POSITIVE_COPIES if label else 1)
    return out


def kept(rows: list[dict], others: float, seed: int) -> list[dict]:
    """Every pair of a question written under the user briefs (answer_data.USERS), and of the other
    questions a share `others`, drawn by question (a question keeps all its pairs or none): on 2
    cores an epoch over everything takes over an hour."""
    if others >= 1.0:
        return rows
    users = {json.loads(line)["question"] for line in USERS.read_text().splitlines() if line.strip()}
    questions = sorted({r["question"] for r in rows} - users)
    drawn = set(random.Random(seed).sample(questions, round(others * len(questions))))
    return [r for r in rows if r["question"] in users or r["question"] in drawn]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=float, default=EPOCHS)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--lr", type=float, default=LR, help="peak learning rate")
    parser.add_argument(
        "--question-only", action="store_true", help="train the control (no sentence) instead"
    )
    parser.add_argument("--out", type=Path, default=None, help="where the ONNX judge goes (default: shipped)")
    parser.add_argument(
        "--pairs", type=Path, default=PAIRS, help="the pairs file (default: the shipped judge's)"
    )
    parser.add_argument("--limit", type=int, default=0, help="train on the first N pairs only (a smoke test)")
    parser.add_argument(
        "--others", type=float, default=1.0,
        help="share of the questions not written under the user briefs kept (all their pairs or none); "
        "the user briefs' questions are always kept",
    )  # fmt: skip
    parser.add_argument(
        "--work", type=Path, default=Path("/tmp/citewise-answer-judge"), help="scratch folder"
    )
    args = parser.parse_args()
    started = time.time()
    rows = [json.loads(line) for line in args.pairs.read_text().splitlines() if line.strip()]
    random.Random(args.seed).shuffle(rows)
    rows = rows[: args.limit] if args.limit else rows
    rows = kept(rows, args.others, args.seed)
    pairs = examples(rows, args.question_only)
    name = "control" if args.question_only else "answer"
    print(f"{len(pairs)} pairs, {sum(p[2] == 0 for p in pairs)} answering, {args.epochs} epochs", flush=True)
    saved = train(pairs, args.work / name, args.epochs, args.seed, args.lr, None, LABELS, MAX_LENGTH)
    out = args.out or (args.work / "control" / "onnx" if args.question_only else ANSWER)
    export(saved, out, {"name": name, "labels": list(LABELS), "max_length": MAX_LENGTH, "sentences": 1})
    print(f"judge written to {out} in {time.time() - started:.0f} s on 2 cores", flush=True)


if __name__ == "__main__":
    main()
