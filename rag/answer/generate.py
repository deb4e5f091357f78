"""The model writes the draft: one prompt after another, streamed token by token."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence

from rag.answer.events import TokenEvent
from rag.llm import LLM, LLMError, Message
from rag.types import Timings

Prompt = tuple[list[Message], Callable[[str], str]]  # messages, and its draft's citation renumbering


class DraftError(LLMError):
    """The model failed while writing; `partial` is what it had written."""

    def __init__(self, message: str, partial: str):
        super().__init__(message)
        self.partial = partial


def write(
    llm: LLM,
    prompts: Sequence[Prompt],
    timings: Timings,
    started: float,
    *,
    max_tokens: int,
    temperature: float,
) -> Generator[TokenEvent, None, str]:
    """Yield each token as it comes and return the draft: the prompts' drafts, each renumbered to
    the answer's sources, joined. The first token's time is set on `timings`."""
    drafts: list[str] = []
    pieces: list[str] = []
    try:
        for messages, renumber in prompts:
            pieces = []
            for piece in llm.stream(messages, max_tokens=max_tokens, temperature=temperature):
                if timings.first_token is None:
                    timings.first_token = time.perf_counter() - started
                pieces.append(piece)
                yield TokenEvent(piece)
            drafts.append(renumber("".join(pieces)).strip())
            pieces = []
            if len(prompts) > 1:
                yield TokenEvent(" ")
    except LLMError as exc:
        raise DraftError(str(exc), " ".join([*drafts, "".join(pieces)]).strip()) from exc
    return " ".join(drafts)
