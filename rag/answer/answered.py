"""A quote of the sentence that answers, added to an answer with its citation (the `select`
stage's quote), and the answer judge as the stages call it (`Answering`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rag.answer.citations import next_number
from rag.search.evidence import Evidence, Sentence
from rag.types import AnswerSentence, Check, Citation

# (title, sentence) pairs in, p(answers the question) out: the answer judge bound to the question.
Answering = Callable[[Sequence[tuple[str, str]]], np.ndarray]


@dataclass(frozen=True)
class Quote:
    """An evidence sentence to add, and why."""

    ev: Evidence
    sentence: Sentence
    why: str


def add_quotes(
    quotes: Sequence[Quote], sentences: list[AnswerSentence], citations: list[Citation]
) -> tuple[list[AnswerSentence], list[Citation]]:
    """The answer with each quote added, its paper cited (a new citation when it was not)."""
    sentences, citations = list(sentences), list(citations)
    by_paper = {c.paper_id: c.number for c in citations}
    for q in quotes:
        number = by_paper.get(q.ev.paper.id)
        if number is None:
            number = next_number(citations)
            paper, s = q.ev.paper, q.sentence
            citations.append(Citation(number, paper.id, paper.display_title, paper.url, paper.sources, s.text,
                                      s.start, s.end, 1.0))  # fmt: skip
            by_paper[paper.id] = number
        quoted = f"“{q.sentence.text.rstrip('.')}”."
        sentences.append(AnswerSentence(quoted, [number], True, 1.0, False, [Check("quoted", True)]))
    return sentences, citations
