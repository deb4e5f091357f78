"""Is this paper about the topic? A survey list's candidates (the papers whose text holds the
topic's phrases, and the papers dense search finds for the question) are each read by the
membership judge (`rag.judge.answer.AboutJudge`, trained on survey lists): "Which papers study
<topic>?" beside the paper's title and its sentence nearest the topic. A paper is listed when the
judge gives it at least `keep`.

Words find the papers that name a topic, including those that only mention it in passing
("unlike Mamba, we ..."); dense search finds papers that name it otherwise ("delayed
generalization" for grokking). Reading each candidate with a cross-encoder keeps the ones that
are about it, and says which sentence decided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rag import text as tx
from rag.types import Paper


@dataclass(frozen=True)
class Judged:
    """A candidate paper, the judge's p(about the topic) and the sentence it read."""

    paper: Paper
    p: float
    sentence: str
    cosine: float = 0.0  # of the topic to that sentence


def asked(topic: str, also: Sequence[str] = ()) -> str:
    """The question the judge reads for every candidate (the same wording whatever the reader
    typed: the judge was trained on which-paper questions)."""
    named = f"{topic} ({', '.join(also)})" if also else topic
    return f"Which papers study {named}?"


class Membership:
    """Reads candidates with a judge (`judge.scores(question, [(title, sentence)])` -> p(about))."""

    def __init__(self, judge, embed: Callable[[list[str]], np.ndarray], vectors, keep: float,
                 keep_words: float | None = None):  # fmt: skip
        self.judge, self.embed, self.vectors, self.keep = judge, embed, vectors, keep
        self.keep_words = keep if keep_words is None else keep_words

    def read(self, topic: str, also: Sequence[str], papers: Sequence[Paper]) -> list[Judged]:
        """Each paper with p(about the topic) and its sentence nearest the topic."""
        if not papers:
            return []
        nearest = self.nearest(topic, also, papers)
        scores = self.judge.scores(
            asked(topic, also), [(p.display_title, s) for p, (s, _) in zip(papers, nearest)]
        )
        return [Judged(p, float(x), s, c) for p, x, (s, c) in zip(papers, scores, nearest)]

    def nearest(self, topic: str, also: Sequence[str], papers: Sequence[Paper]) -> list[tuple[str, float]]:
        """Each paper's abstract sentence with the highest cosine to the topic (its names), and
        that cosine."""
        query = np.asarray(self.embed([" ; ".join([topic, *also])]), dtype=np.float32)[0]
        out = []
        for paper, matrix in zip(papers, self.vectors.vectors(papers, self.embed)):
            spans = tx.sentence_spans(paper.abstract)
            if not spans or matrix.shape[0] != len(spans):
                out.append((tx.plain(paper.abstract[:300]), 0.0))
                continue
            cosines = matrix @ query
            best = int(np.argmax(cosines))
            a, b = spans[best]
            out.append((tx.plain(paper.abstract[a:b]), float(cosines[best])))
        return out
