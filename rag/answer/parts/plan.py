"""Which parts a question is answered in, each with its own paper: one part per thing a comparison
sets side by side, the paper a follow-up points at, one part per clause of a two-part question.

A small model reads one paper and one question far more reliably than several of each: given two
papers' evidence in one prompt, the default model gave one paper's finding to the other, or
answered one side and called the other unstated (docs/evaluation.md, answers by parts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rag.question import Intent, Kind
from rag.search.evidence import Evidence
from rag.text import content_words, name_in, names
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


KINDS = ("comparison", "follow_up", "two_part")


def plan(
    intent: Intent,
    results: list[SearchResult],
    evidence: Sequence[Evidence],
    search_one: SearchOne,
    kinds: Sequence[str] = KINDS,
) -> list[Part]:
    """The parts of the answer to `intent`, or [] when it is answered in one prompt as before (a
    simple question about one paper, a list of papers, a which-paper question, or a kind not in
    `kinds`)."""
    if intent.asks_for_paper or intent.kind in (Kind.TOPICS, Kind.SIMILAR):
        return []
    if len(intent.compared) == 2:
        return _compared(intent, search_one) if "comparison" in kinds else []
    paper = _pinned(intent, results)
    if paper is not None:  # a follow-up about the paper just cited: answered from it alone
        return (
            [Part(p, p, paper, result=results[0]) for p in _clauses(intent)] if "follow_up" in kinds else []
        )
    if len(intent.questions) > 1 and evidence and "two_part" in kinds:
        first = evidence[0].paper  # the question's paper: the first-ranked source
        result = next((r for r in results if r.paper.id == first.id), None)
        return _numbered([_part_of(q, first, result, search_one) for q in intent.questions])
    return []


def _part_of(question: str, first: Paper, result: SearchResult | None, search_one: SearchOne) -> Part:
    """A clause of a two-part question: about the question's paper, unless the clause names something
    that paper does not and another paper does ("..., and what does CodePlan generate?")."""
    said = names(question)
    if said and not all(name_in(n, first.text) for n in said):
        other = [r for r in search_one(question) if all(name_in(n, r.paper.text) for n in said)]
        if other:
            return Part(question, question, other[0].paper, result=other[0])
    return Part(question, question, first, result=result)


def _numbered(parts: list[Part]) -> list[Part]:
    """Each part's source number: one per paper, in the order the parts name them."""
    numbers: dict[str, int] = {}
    return [replace(p, number=numbers.setdefault(p.paper.id, len(numbers) + 1)) for p in parts]


def _compared(intent: Intent, search_one: SearchOne) -> list[Part]:
    """One part per thing compared, each the best paper of a search for that thing and asked the
    question of it alone (asked the whole question "for A only", the default model answered for
    both, naming the other paper); [] when both lead to the same paper, or a paper names the other
    thing (a paper compared with its own baseline is one paper's question)."""
    asked = intent.compared_asked or intent.compared
    found = []
    for subject, question in zip(intent.compared, asked):
        # Searched as the question asked of it alone: a bare acronym ("PIG") names other papers too.
        results = search_one(question)
        named = [r for r in results if all(name_in(n, r.paper.text) for n in names(subject))]
        if not results:
            return []
        found.append((named or results)[0])
    a, b = found
    # A paper set against what its own abstract names ("How much faster is X than FlashAttention-2?")
    # is one paper's question: the other thing is the first paper's baseline, not a paper asked about.
    if a.paper.id == b.paper.id or _mentions(a, intent.compared[1]) or _mentions(b, intent.compared[0]):
        return []
    return [
        Part(a, a, r.paper, number=n, label=label, result=r)
        for n, (label, a, r) in enumerate(zip(intent.compared, asked, found), 1)
    ]


def _mentions(result: SearchResult, subject: str) -> bool:
    """Whether the paper of `result` speaks of `subject` itself: names all it names, or, when it
    names nothing ("the baseline reward model"), holds all its content words."""
    said = names(subject)
    if said:
        return all(name_in(n, result.paper.text) for n in said)
    words = content_words(subject)
    return bool(words) and words <= content_words(result.paper.text)


def _pinned(intent: Intent, results: list[SearchResult]) -> Paper | None:
    """The paper a follow-up points at, when the sources were narrowed to it (`retrieve.on_paper`)."""
    about = intent.about
    if about is None or len(results) != 1 or results[0].paper.id != about.id:
        return None
    return about


def _clauses(intent: Intent) -> tuple[str, ...]:
    return intent.questions if len(intent.questions) > 1 else (intent.question,)
