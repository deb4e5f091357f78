"""Answers by parts: a comparison of two papers, a follow-up about the paper just cited and a
two-part question, each part answered from its own paper (`plan`, `run`)."""

from rag.answer.parts.plan import Part, plan
from rag.answer.parts.run import answer_by_parts, stream_by_parts

__all__ = ["Part", "answer_by_parts", "plan", "stream_by_parts"]
