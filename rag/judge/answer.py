"""The answer judge: does this sentence of an abstract answer the question? A MiniLM cross-encoder
citewise trained on questions written for conference abstracts (eval/judge/answer_data.py), read as
int8 ONNX. It reads the question beside one sentence prefixed by its paper's title (the title names
the method a question asks about; a sentence often says only "we propose"): the same text at
training and at run time.

Where a bi-encoder's cosine says "on the topic", the cross-encoder reads both texts together, so a
sentence true of the paper but about another detail scores low (ARES; InPars-light).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.judge.model import WEIGHTS, JudgeLoadError, PairModel

ANSWER = WEIGHTS / "answer"
ABOUT = WEIGHTS / "about"
LABELS = ("answers", "other")  # class 0: the sentence answers the question


def shown(title: str, sentence: str) -> str:
    """What the judge reads of a sentence: its paper's title, then the sentence."""
    return f"{title}. {sentence}" if title else sentence


class AnswerJudge:
    """Scores (question, sentence) pairs: p(the sentence answers the question), in batches."""

    labels = LABELS
    what = "an answer judge"

    def __init__(self, folder: Path = ANSWER, threads: int = 2):
        self.model = PairModel(folder, threads=threads, batch_size=32)
        if tuple(self.model.meta.labels) != self.labels:
            raise JudgeLoadError(f"{folder} is not {self.what}: its classes are {self.model.meta.labels}")

    def scores(self, question: str, texts: Sequence[tuple[str, str]]) -> np.ndarray:
        """p(answers) for each (title, sentence) against one question."""
        pairs = [(question, shown(title, sentence)) for title, sentence in texts]
        return self.model.probabilities(pairs)[:, 0].astype(np.float64)


class AboutJudge(AnswerJudge):
    """Scores (question "Which papers study X?", a paper's title and sentence) pairs: p(the paper is
    about X). Trained on the survey lists (eval/judge/train_about.py): a paper that only mentions
    X in passing is not about it."""

    labels = ("about", "other")
    what = "a membership judge"


@lru_cache(maxsize=2)
def about_judge(folder: Path = ABOUT, threads: int = 2) -> AboutJudge:
    """The shipped membership judge, loaded once per process."""
    return AboutJudge(folder, threads)


@lru_cache(maxsize=2)
def answer_judge(folder: Path = ANSWER, threads: int = 2) -> AnswerJudge:
    """The shipped answer judge, loaded once per process."""
    return AnswerJudge(folder, threads)
