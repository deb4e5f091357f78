"""Which parts a question is answered in, each with its own paper: one part per thing a comparison
sets side by side, the paper a follow-up points at, one part per clause of a two-part question.

A small model reads one paper and one question far more reliably than several of each: given two
papers' evidence in one prompt, the default model gave one paper's finding to the other, or
answered one side and called the other unstated (docs/evaluation.md, answers by parts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag.questions import Intent, Kind
from rag.search.evidence import Evidence
from rag.text import name_in, names
from rag.types import Paper, SearchResult

SearchOne = Callable[[str], list[SearchResult]]  # a subject's search, within the question's filters


@dataclass(frozen=True)
class Part:
    """One part of an answer: what the model is asked, what the part is judged as (the part as a
    question of its own), the paper it is answered from, and that paper's source number."""

    question: str  # shown to the model, with its source
    asked: str  # the part alone: its evidence is chosen and its answer judged for this
    paper: Paper
    number: int = 1
    label: str = ""  # the thing compared ("NEDAG"); "" for a part of a one-paper question
    result: SearchResult | None = None  # the search result that found the paper (its passages)

    @property
    def kind(self) -> str:
        return "comparison" if self.label else "one paper"


def plan(
    intent: Intent, results: list[SearchResult], evidence: Sequence[Evidence], search_one: SearchOne
) -> list[Part]:
    """The parts of the answer to `intent`, or [] when it is answered in one prompt as before (a
    simple question about one paper, a list of papers, a which-paper question)."""
    if intent.asks_for_paper or intent.kind in (Kind.TOPICS, Kind.SIMILAR):
        return []
    if len(intent.compared) == 2:
        return _compared(intent, search_one)
    paper = _pinned(intent, results)
    if paper is not None:  # a follow-up about the paper just cited: answered from it alone
        return [Part(p, _with_paper(p, paper), paper, result=results[0]) for p in _clauses(intent)]
    if len(intent.questions) > 1 and evidence:
        first = evidence[0].paper  # the question's paper: the first-ranked source
        result = next((r for r in results if r.paper.id == first.id), None)
        return [Part(p, _with_paper(p, first), first, result=result) for p in intent.questions]
    return []


def _compared(intent: Intent, search_one: SearchOne) -> list[Part]:
    """One part per thing compared, each the best paper of a search for that thing; [] when both
    lead to the same paper (a paper compared with its own baseline is one paper's question)."""
    asked = intent.compared_asked or intent.compared
    found = []
    for subject, question in zip(intent.compared, asked):
        # Searched as the question asked of it alone: a bare acronym ("PIG") names other papers too.
        results = search_one(question)
        named = [r for r in results if all(name_in(n, r.paper.text) for n in names(subject))]
        if not results:
            return []
        found.append((named or results)[0])
    if found[0].paper.id == found[1].paper.id:
        return []
    return [
        Part(intent.question, a, r.paper, number=n, label=label, result=r)
        for n, (label, a, r) in enumerate(zip(intent.compared, asked, found), 1)
    ]


def _pinned(intent: Intent, results: list[SearchResult]) -> Paper | None:
    """The paper a follow-up points at, when the sources were narrowed to it (`retrieve.on_paper`)."""
    about = intent.about
    if about is None or len(results) != 1 or results[0].paper.id != about.id:
        return None
    return about


def _clauses(intent: Intent) -> tuple[str, ...]:
    return intent.questions if len(intent.questions) > 1 else (intent.question,)


def _with_paper(part: str, paper: Paper) -> str:
    """A part as a question of its own: "they" or "its largest variant" made the paper's."""
    return f"{part} (about: {paper.display_title})"
