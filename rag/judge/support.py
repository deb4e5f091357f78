"""The support judge: is an answer sentence supported, contradicted or left unstated by the
abstract it cites? A MiniLM cross-encoder citewise trained on the conference (eval/judge/), read
as int8 ONNX. It reads the claim beside the source's title and the `sentences` sentences of the
abstract that match the claim best (cosine + shared words, the score the answer check uses), in the
abstract's order: the same passage at training and at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rag.judge.model import WEIGHTS, JudgeLoadError, PairModel

SUPPORT = WEIGHTS / "support"


def passage(
    title: str, sentences: Sequence[str], scores: Sequence[float], k: int, must: int | None = None
) -> str:
    """The title and the `k` best-scoring sentences ("" ones are absent), in the abstract's order;
    `must` (training: the sentence a claim is about) is always among them."""
    ranked = sorted((i for i, s in enumerate(sentences) if s), key=lambda i: -scores[i])
    chosen = ([must] if must is not None and sentences[must] else []) + [i for i in ranked if i != must]
    body = " ".join(sentences[i] for i in sorted(chosen[:k]))
    return f"{title}. {body}" if title else body


@dataclass(frozen=True)
class Judgement:
    """The judge's probabilities for one claim against one source."""

    supported: float
    contradicted: float
    unstated: float

    @property
    def label(self) -> str:
        return max(LABELS, key=lambda name: getattr(self, name))


# The classes, in the order of `Judgement`'s fields; meta.json names the model's output order.
LABELS = tuple(Judgement.__dataclass_fields__)


class SupportJudge:
    """Scores (claim, passage) pairs in batches."""

    def __init__(self, folder: Path = SUPPORT, threads: int = 2):
        self.model = PairModel(folder, threads=threads)
        if set(self.model.meta.labels) != set(LABELS):
            raise JudgeLoadError(f"{folder} is not a support judge: its classes are {self.model.meta.labels}")
        self.order = [self.model.meta.labels.index(name) for name in LABELS]

    @property
    def sentences(self) -> int:
        return self.model.meta.sentences

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
        return [Judgement(*map(float, row[self.order])) for row in self.model.probabilities(pairs)]


@lru_cache(maxsize=2)
def support_judge(folder: Path = SUPPORT, threads: int = 2) -> SupportJudge:
    """The shipped support judge, loaded once per process."""
    return SupportJudge(folder, threads)
