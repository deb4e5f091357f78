"""Does the checked answer answer, when its sources do? (the `answered` stage, rag/answer/stages.py)

A small model writes a draft true of the cited paper that answers another question, leaves one side
of a comparison out, or says "the papers do not state" with the answer in its prompt. The answer
judge (rag/judge/answer.py) has scored every sentence the prompt showed; when one of them answers
the question (p >= `trust.answer_keep`) and the answer says nothing that does, that sentence is
quoted with its citation (extractive, so always faithful). Asked about several subjects, each
subject's source is looked at on its own, so a side the answer left out gets its own quote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rag import text as tx
from rag.answer.citations import next_number, strip_markers
from rag.questions import Intent
from rag.search.evidence import Evidence, Sentence
from rag.types import AnswerSentence, Check, Citation

# (title, sentence) pairs in, p(answers the question) out: the answer judge bound to the question.
Answering = Callable[[Sequence[tuple[str, str]]], np.ndarray]
# An evidence sentence whose content words the answer holds this much of is already said.
SAID = 0.6


@dataclass(frozen=True)
class Quote:
    """An evidence sentence to add, and why."""

    ev: Evidence
    sentence: Sentence
    why: str


def _best(ev: Evidence) -> Sentence | None:
    judged = [s for s in ev.shown if s.answers is not None]
    return max(judged, key=lambda s: s.answers or 0.0, default=None)


def _already_said(sentence: Sentence, answer: str) -> bool:
    words = tx.content_words(sentence.text)
    return bool(words) and len(words & tx.content_words(answer)) / len(words) >= SAID


def quotes_needed(
    intent: Intent,
    sentences: Sequence[AnswerSentence],
    citations: Sequence[Citation],
    evidence: Sequence[Evidence],
    answering: Answering,
    keep: float,
) -> list[Quote]:
    """The evidence sentences the answer needs: for a question about several subjects, each
    subject's source the answer does not cite, when its best sentence answers; else the best
    answering sentence of all, when no answer sentence answers (by the judge) or says it."""
    answer = " ".join(strip_markers(s.text) for s in sentences)
    cited = {c.paper_id for s in sentences for c in citations if c.number in s.citations}
    if len(intent.parts) > 1 and intent.subjects:
        out = []
        for ev in evidence:
            best = _best(ev)
            if (
                ev.paper.id not in cited
                and best
                and (best.answers or 0) >= keep
                and not _already_said(best, answer)
            ):
                out.append(Quote(ev, best, f"the answer left out {ev.short_title}, whose sentence answers"))
        return out
    found = [(s, ev) for ev in evidence if (s := _best(ev)) is not None]
    if not found:
        return []
    best, ev = max(found, key=lambda t: t[0].answers or 0.0)
    if (best.answers or 0.0) < keep or _already_said(best, answer):
        return []
    titles = {c.number: c.title for c in citations}
    claims = [(titles.get(s.citations[0], "") if s.citations else "", strip_markers(s.text))
              for s in sentences if s.claim]  # fmt: skip
    if claims and float(np.max(answering(claims))) >= keep:
        return []
    return [Quote(ev, best, f"no answer sentence answers; {ev.short_title} does ({best.answers:.2f})")]


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
