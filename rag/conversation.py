"""Follow-up questions: what "it" or "they" refers to, from the turns before. Costs no LLM call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag import questions as qs
from rag.types import Answer, Paper


@dataclass
class Turn:
    """A finished exchange, the context for follow-up questions."""

    question: str
    answer: Answer


def referent(question: str, history: Sequence[Turn]) -> Paper | None:
    """The paper a follow-up is about: the one paper the last answer cited. None when the question
    is not about it (`questions.points_at_paper`), or the last answer cited none (a refusal: its best source is a
    guess) or several (then "they" could be any of them)."""
    if not history or not qs.points_at_paper(question):
        return None
    last = history[-1].answer
    cited = {c.paper_id for c in last.citations}
    if len(cited) != 1:
        return None
    return next((r.paper for r in last.retrieved if r.paper.id in cited), None)


def standalone_query(question: str, history: Sequence[Turn]) -> str:
    """Make a follow-up searchable on its own: when it refers back ("what datasets did it
    use?"), name the paper the last answer was about."""
    if not history or not qs.refers_back(question):
        return question
    last = history[-1].answer
    cited = [c.title for c in last.citations] or [r.paper.display_title for r in last.retrieved[:1]]
    if not cited:
        return f"{question} (context: {history[-1].question})"
    return f"{question} (about: {cited[0]})"
