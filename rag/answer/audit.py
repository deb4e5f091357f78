"""The model's verdict on every checked answer, asked after the answer's own prompt.

After the draft, the answer's prompt is in llama.cpp's cache: the same prompt with the statements
appended, one at a time ("does source [2] support this statement? SUPPORTED, CONTRADICTED or
UNSTATED"), its reply held to the three labels by a grammar, costs the statement's tokens and one
label, not another reading of the sources. The draft is not in that conversation: shown as its
own turn, the model judged its own sentences no better (docs/evaluation.md, "The verdict in every
answer"). A statement is one shown sentence against one source it cites: a sentence naming
several papers is judged once per paper. A sentence that restates a sentence of its source (its
words in their order, some left out) needs no model.

The `verdict` answer stage (rag/answer/stages.py) marks a contradicted sentence with the source's
sentence it contradicts (or removes it: `trust.on_contradiction`), and marks an unstated one
(`Check("verdict", ...)`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag import text as tx
from rag.answer.citations import strip_markers
from rag.answer.trust.checks import Stance
from rag.answer.trust.polarity import NEGATION as _NEGATION
from rag.llm import LLM, LLMError, Message
from rag.search.evidence import Evidence
from rag.types import AnswerSentence, Citation

log = logging.getLogger(__name__)

AUDIT_HEAD = "Before you answer: does source"
# One statement a call: asked about a numbered list in one call, the default model labelled by
# position (the first SUPPORTED, the second CONTRADICTED, in either order; docs/evaluation.md).
AUDIT_USER = (
    AUDIT_HEAD
    + """ [{source}] support this statement? "{statement}"
Reply with one word: SUPPORTED, CONTRADICTED (the source says something that makes it false) or UNSTATED (the source says neither)."""
)
GRAMMAR = 'root ::= "SUPPORTED" | "CONTRADICTED" | "UNSTATED"\n'

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
    except a quoted paper sentence (`paper_fit`), a sentence that restates its source (`_copied`),
    and a sentence the support judge passed with confidence (the model is asked only where the
    judge is unsure: the cascade)."""
    offered = {ev.paper.id: ev for ev in evidence}
    by_number = {c.number: offered.get(c.paper_id) for c in citations}
    out = []
    for i, s in enumerate(sentences):
        if not s.claim or any(c.name == "paper_fit" and c.passed for c in s.checks):
            continue
        if any(c.name == "judge" and c.passed and c.sure for c in s.checks):
            continue
        text = strip_markers(s.text).strip()
        for n in s.citations:
            ev = by_number.get(n)
            if ev is not None and not _copied(text, ev):
                out.append(Statement(i, ev.number, text))
    return out


# Words a restatement may add or drop without changing what it claims.
_FREE = frozenset({"a", "an", "the"})


def _stems(text: str) -> list[str]:
    """The words of `text` in order, stemmed, without articles or words about the sources."""
    meta = tx.naming_stems()  # "the paper proposes" restates "we propose"
    return [st for w in tx.words(text) if w not in _FREE and (st := tx.stem(w)) not in meta]


def _restated(claim: list[str], sentence: str) -> bool:
    """`claim`'s words occur in `sentence` in the same order, with nothing skipped between them
    that negates ("X improves Y" is not a restatement of "X does not improve Y")."""
    source = _stems(sentence)
    at, skipped = 0, []
    for word in claim:
        try:
            found = source.index(word, at)
        except ValueError:
            return False
        if at:
            skipped += source[at:found]
        at = found + 1
    return not any(_NEGATION.fullmatch(w) for w in skipped)


def _copied(text: str, ev: Evidence) -> bool:
    """The sentence restates one sentence of its source: that sentence's words, in its order,
    some left out ("The paper proposes a sampling-based method that ..." for "Finally, we
    propose a sampling-based method that ..."). A changed, added or reordered word (a direction,
    a number moved to another quantity, "only") is no restatement, and the model is asked."""
    claim = _stems(text)
    return bool(claim) and any(_restated(claim, s) for s in [ev.paper.title, *(s.text for s in ev.shown)])


def audit_messages(messages: Sequence[Message], statement: Statement) -> list[Message]:
    """The answer's prompt with the question about one statement appended: everything before it
    is the prompt llama.cpp has just read."""
    *before, last = messages
    asked = AUDIT_USER.format(source=statement.source, statement=statement.text)
    return [*before, {"role": last["role"], "content": last["content"] + "\n\n" + asked}]


def is_audit(messages: Sequence[Message]) -> bool:
    """Whether a prompt is the verdict's (the answer's prompt with a statement appended)."""
    return bool(messages) and AUDIT_HEAD in messages[-1]["content"]


def ask(llm: LLM, messages: Sequence[Message], asked: Sequence[Statement]) -> list[Stance | None]:
    """The model's stance on each statement, each after the answer's cached prompt."""
    return [_one(llm, messages, statement) for statement in asked]


def _one(llm: LLM, messages: Sequence[Message], statement: Statement) -> Stance | None:
    try:
        reply = llm.complete(
            audit_messages(messages, statement), max_tokens=4, temperature=0.0, grammar=GRAMMAR
        )
    except LLMError as exc:
        log.warning("the answer's verdict failed: %s", exc)
        return None
    return next(
        (stance for label, stance in _LABELS.items() if reply.strip().upper().startswith(label[:5])), None
    )


def contradicted_by(text: str, ev: Evidence) -> str:
    """The source's sentence a contradicted statement is closest to: what the user reads as the
    reason ("the source says the opposite: ...")."""
    words = tx.content_words(text)
    best = max(ev.shown, key=lambda s: len(words & tx.content_words(s.text)), default=None)
    return best.text if best is not None else ""
