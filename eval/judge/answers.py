"""How well the answer judge finds the answering sentence, beside today's `fit`, without generating:
`python -m eval.judge.answers GOLD... [--judge DIR ...] [--question-only]`, one row per set and scorer
(a set written by others is its own row: ../shared/data/outside/questions-b.jsonl).

For every one-paper answerable item, the gold abstract's sentences are ranked by each scorer; the
item counts when the top sentence holds every required fact (those the question does not already
hold). For answerable against near-miss unanswerable items, each item's best sentence score (over
its gold or near paper) separates the two: AUC. Scorers: `fit` (cosine + word overlap), each judge
given and fused with `fit` as evidence orders sentences (FUSE), and with `--question-only` each judge reading no sentence (the control: near chance).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from eval.gold import normalized
from eval.judge.corpus import conference
from eval.metrics import contains
from rag import text as tx
from rag.judge.answer import ANSWER, AnswerJudge
from rag.search.evidence import FUSE

Scorer = Callable[[str, str, list[str]], np.ndarray]


def fit_scorer(embedder) -> Scorer:
    def score(question: str, title: str, sentences: list[str]) -> np.ndarray:
        qv = np.asarray(embedder.embed(question), dtype=np.float32)
        vectors = np.asarray(embedder.embed_batch(sentences), dtype=np.float32)
        words = tx.content_words(question)
        return vectors @ qv + 0.35 * np.array([tx.overlap(words, s) for s in sentences])

    return score


def judge_scorer(judge: AnswerJudge) -> Scorer:
    return lambda q, title, sentences: judge.scores(q, [(title, s) for s in sentences])


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a random positive scores above a random negative), ties half."""
    if not positive or not negative:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def items(paths: Sequence[Path]) -> list[dict]:
    rows = [
        normalized(json.loads(line)) for p in paths for line in p.read_text().splitlines() if line.strip()
    ]
    return [r for r in rows if not r.get("history") and r["type"] != "survey"]


def measure(rows: list[dict], scorers: dict[str, Scorer]) -> dict[str, dict]:
    papers = conference()
    out = {name: {"top1": [], "answerable": [], "unanswerable": []} for name in scorers}
    for r in rows:
        answerable = r["type"] != "unanswerable"
        ids = r["papers"] if answerable else [p for p in [r.get("about")] if p]
        if not ids or not all(p in papers for p in ids):
            continue
        facts = [[v] if isinstance(v, str) else v for v in r["facts"]]
        facts = [f for f in facts if not any(contains(r["question"], v) for v in f)]
        for name, scorer in scorers.items():
            best = []
            for pid in ids:
                sentences = tx.sentences(papers[pid]["abstract"])
                scores = scorer(r["question"], papers[pid]["title"], sentences)
                best.append(float(scores.max()))
                if answerable and len(ids) == 1 and facts:
                    top = sentences[int(np.argmax(scores))]
                    out[name]["top1"].append(all(any(contains(top, v) for v in f) for f in facts))
            out[name]["answerable" if answerable else "unanswerable"].append(min(best))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold", nargs="+", type=Path)
    parser.add_argument(
        "--judge", type=Path, action="append", default=None,
        help="a judge's folder (default: shipped); repeat to compare judges, one row each",
    )  # fmt: skip
    parser.add_argument(
        "--question-only", action="store_true", help="also the control: each judge reads no sentence"
    )
    parser.add_argument("--fuse", type=float, default=FUSE, help="the weight of `fit` in the fused score")
    args = parser.parse_args()
    from rag.index.embedding import embedder_from_settings
    from rag.settings import Settings

    fit = fit_scorer(embedder_from_settings(Settings()))
    scorers: dict[str, Scorer] = {"fit": fit}
    for folder in args.judge or [ANSWER]:
        judge = AnswerJudge(folder)
        name = "judge" if folder == ANSWER else f"judge {folder}"
        scorers[name] = judge_scorer(judge)
        scorers[f"{name}, fused"] = lambda q, t, s, j=judge: (
            j.scores(q, [(t, x) for x in s]) + args.fuse * fit(q, t, s)
        )
        if args.question_only:  # the control: the same number of pairs, the sentence left out
            scorers[f"{name}, question only"] = lambda q, t, s, j=judge: j.scores(q, [("", "")] * len(s))
    print("| set | scorer | top sentence holds every fact | answerable vs near-miss AUC |\n|---|---|---|---|")
    for path in args.gold:  # one row per set and scorer: sets written by others are their own column
        for name, m in measure(items([path]), scorers).items():
            top = f"{sum(m['top1'])}/{len(m['top1'])} ({np.mean(m['top1']):.3f})" if m["top1"] else "-"
            print(
                f"| {path.stem} | {name} | {top} | {auc(m['answerable'], m['unanswerable']):.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
