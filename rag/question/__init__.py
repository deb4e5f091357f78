"""A question's reading, in one place: `read` turns what the user typed, and the conversation it
was typed in, into one `Intent` that everything downstream takes as a value.

- `rules`: the wording rules (what is asked for, its parts, names, counts, the kind of answer);
- `said`: the status, area and venue said in words ("Which oral papers ..."), a closed table;
- `clauses`: the parts of a two-part question, the alternatives of "X or Y", the two sides of a
  comparison;
- `reader`: the trained question reader (a list or not, and on what topic);
- `conversation`: the learned follow-up decision, and the paper(s) a follow-up points at;
- `rewrite`: the local model's second reading of a list question the reader was unsure of (the
  pipeline asks it only then, since it costs a generation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag.question.conversation import FollowUp
from rag.question.intent import Intent, Kind, Wanted
from rag.question.rules import parse

if TYPE_CHECKING:
    from rag.question.reader import Reader
    from rag.types import Turn

__all__ = ["FollowUp", "Intent", "Kind", "Wanted", "read"]


def read(
    question: str,
    history: Sequence[Turn] = (),
    reader: Reader | None = None,
    follow: FollowUp | None = None,
) -> Intent:
    """The `Intent` of `question` asked after `history`: `reader` reads a list and its topic,
    `follow` decides whether it follows up the last answer (each falls back to wording rules when
    not given)."""
    return parse(question, history, reader=reader, follow=follow)
