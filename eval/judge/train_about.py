"""Train the membership judge ("is this paper about the topic?") and ship it:
`python -m eval.judge.train_answer --work W` (for the answer judge's trained folder), then
`python -m eval.judge.train_about --init W/answer/trained` (1 epoch, about 15 min on 2 cores).

From `eval/judge/data/about-pairs.jsonl` (`python -m eval.judge.about_data`): the question "Which
papers study <topic>?" beside a candidate's title and its sentence nearest the topic, labelled by
the survey list. A cross-encoder with a 2-class head ("about", "other"), started from `--init` (the
answer judge's trained model: it already reads a question beside a sentence) or the shipped
MiniLM, exported as int8 ONNX with its sha256 to `rag/judge/weights/about/`. `--topic-only` trains
the control (the question without the paper): it must score near chance.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from eval.judge.about_data import OUT as PAIRS
from eval.judge.corpus import abstract_sentences, conference
from eval.judge.train import export, train
from rag.judge.answer import ABOUT, AboutJudge, shown

LABELS = AboutJudge.labels
MAX_LENGTH = 128
LR = 3e-5


def examples(rows: list[dict], topic_only: bool = False) -> list[tuple[str, str, int]]:
    papers = conference()
    out = []
    for row in rows:
        sentences = abstract_sentences(row["paper"])
        sentence = sentences[row["sentence"]] if 0 <= row["sentence"] < len(sentences) else sentences[0]
        text = "" if topic_only else shown(papers[row["paper"]]["title"], sentence)
        out.append((row["question"], text, LABELS.index(row["label"])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--init", type=Path, default=None, help="a trained cross-encoder folder to start from")
    ap.add_argument("--topic-only", action="store_true", help="train the control (no paper) instead")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--pairs", type=Path, default=PAIRS, help="the training pairs (about_data's output)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/citewise-about-judge"))
    args = ap.parse_args()
    started = time.time()
    rows = [json.loads(line) for line in args.pairs.read_text().splitlines() if line.strip()]
    random.Random(args.seed).shuffle(rows)
    pairs = examples(rows, args.topic_only)
    print(f"{len(pairs)} pairs, {sum(p[2] == 0 for p in pairs)} about", flush=True)
    saved = train(pairs, args.work / ("control" if args.topic_only else "about"), args.epochs, args.seed,
                  lr=LR, init=args.init, labels=LABELS, max_length=MAX_LENGTH)  # fmt: skip
    out = args.out or (args.work / "control" / "onnx" if args.topic_only else ABOUT)
    meta = {"name": "about", "labels": list(LABELS), "max_length": MAX_LENGTH, "sentences": 1}
    print("exported to", export(saved, out, meta), f"in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
