"""The model's verdict on every checked answer, judged in the answer's own conversation.

After the draft, the answer's prompt is in llama.cpp's cache: the same prompt with the statements
appended ("for each numbered statement: SUPPORTED, CONTRADICTED or UNSTATED by the source it
cites"), its reply held to one label a line by a grammar, costs the statements' tokens and a few
labels, not another reading of the sources. The draft is not in that conversation: shown as its
own turn, the model judged its own sentences (docs/evaluation.md, "The verdict in every answer"). A statement is one shown sentence against one source it cites: a sentence naming
several papers is judged once per paper. A sentence copied word for word from its source needs
no model.

The `verdict` answer stage (rag/answer/stages.py) removes a contradicted sentence with the
source's sentence it contradicts, and marks an unstated one (`Check("verdict", ...)`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag import text as tx
from rag.answer.citations import strip_markers
from rag.answer.trust.checks import Stance
from rag.llm import LLM, LLMError, Message
from rag.search.evidence import Evidence
from rag.types import AnswerSentence, Citation

log = logging.getLogger(__name__)

AUDIT_HEAD = "Before you answer: here are statements about the sources"
AUDIT_USER = AUDIT_HEAD + """, each with the source it cites:
{statements}

Check each statement against the text of the source it cites, and nothing else. Write its number and one word: SUPPORTED if that source says it, CONTRADICTED if that source says something that makes it false, UNSTATED if that source says neither."""

_LABELS = {"SUPPORTED": Stance.SUPPORTED, "CONTRADICTED": Stance.CONTRADICTED, "UNSTATED": Stance.UNSTATED}


@dataclass(frozen=True)
class Statement:
    """One shown sentence (its index in the answer) against one source it cites (the number it
    had in the prompt)."""

    index: int
    source: int
    text: str


# verdicts(statements) -> one stance per statement (None where the model gave none)
Audit = Callable[[Sequence[Statement]], list["Stance | None"]]


def statements(
    sentences: Sequence[AnswerSentence], citations: Sequence[Citation], evidence: Sequence[Evidence]
) -> list[Statement]:
    """The statements the model is asked about: each shown claim against each source it cites,
    except a quoted paper sentence (`paper_fit`) and a sentence its source holds word for word."""
    offered = {ev.paper.id: ev for ev in evidence}
    by_number = {c.number: offered.get(c.paper_id) for c in citations}
    out = []
    for i, s in enumerate(sentences):
        if not s.claim or any(c.name == "paper_fit" and c.passed for c in s.checks):
            continue
        text = strip_markers(s.text).strip()
        for n in s.citations:
            ev = by_number.get(n)
            if ev is not None and not _copied(text, ev):
                out.append(Statement(i, ev.number, text))
    return out


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", tx.plain(text).lower()))


def _copied(text: str, ev: Evidence) -> bool:
    """The sentence is a span of its source, word for word: it says what the source says. (One
    changed word, "increases" for "reduces", is not a copy.)"""
    words = _words(text)
    return bool(words) and words in _words(ev.paper.title + " " + ev.text)


def audit_messages(messages: Sequence[Message], asked: Sequence[Statement]) -> list[Message]:
    """The answer's prompt with the statements appended to its question: everything before them
    is the prompt llama.cpp has just read."""
    lines = "\n".join(f"{k}. [{s.source}] {s.text}" for k, s in enumerate(asked, 1))
    *before, last = messages
    appended = last["content"] + "\n\n" + AUDIT_USER.format(statements=lines)
    return [*before, {"role": last["role"], "content": appended}]


def is_audit(messages: Sequence[Message]) -> bool:
    """Whether a prompt is the verdict's (the answer's prompt with the statements appended)."""
    return bool(messages) and AUDIT_HEAD in messages[-1]["content"]


def grammar(count: int) -> str:
    """GBNF: exactly `count` lines, "<k>: <LABEL>"."""
    lines = ' "\\n" '.join(f'"{k}: " label' for k in range(1, count + 1))
    return f'root ::= {lines}\nlabel ::= "SUPPORTED" | "CONTRADICTED" | "UNSTATED"\n'


def parse(reply: str, count: int) -> list[Stance | None]:
    """One stance per statement from "k: LABEL" lines; a missing or garbled line is None."""
    said: dict[int, Stance] = {}
    for m in re.finditer(r"(\d+)\s*[:.)]\s*\**\s*(SUPPORTED|CONTRADICTED|UNSTATED)", reply.upper()):
        said.setdefault(int(m[1]), _LABELS[m[2]])
    return [said.get(k) for k in range(1, count + 1)]


def ask(llm: LLM, messages: Sequence[Message], asked: Sequence[Statement]) -> list[Stance | None]:
    """The model's stance on each statement, after the answer's prompt."""
    if not asked:
        return []
    try:
        reply = llm.complete(
            audit_messages(messages, asked),
            max_tokens=6 * len(asked) + 4,
            temperature=0.0,
            grammar=grammar(len(asked)),
        )
    except LLMError as exc:
        log.warning("the answer's verdict failed: %s", exc)
        return [None] * len(asked)
    return parse(reply, len(asked))


def contradicted_by(text: str, ev: Evidence) -> str:
    """The source's sentence a contradicted statement is closest to: what the user reads as the
    reason ("the source says the opposite: ...")."""
    words = tx.content_words(text)
    shown = [ev.sentences[i] for i in ev.chosen] or ev.sentences
    best = max(shown, key=lambda s: len(words & tx.content_words(s.text)), default=None)
    return best.text if best is not None else ""
