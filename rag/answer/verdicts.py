"""The model's one-word verdicts, each in a short prompt of its own: is a source's paper the answer to a
which-paper question (the `paper_fit` check), and does an abstract support, contradict or not
address a claim (the `entailment` check)."""

from __future__ import annotations

import logging

from rag.answer.citations import strip_markers
from rag.answer.prompts import (
    CONFIRM_SYSTEM,
    CONFIRM_USER,
    ENTAIL_SYSTEM,
    ENTAIL_USER,
)
from rag.answer.trust.checks import Stance
from rag.llm import LLM, LLMError
from rag.search.evidence import Evidence
from rag.text import plain

log = logging.getLogger(__name__)


def confirm_paper(llm: LLM, question: str, ev: Evidence) -> bool | None:
    """Whether the paper of the source `ev` is the answer to `question`."""
    user = CONFIRM_USER.format(title=ev.paper.display_title, text=ev.text, question=question)
    return yes_no(llm, CONFIRM_SYSTEM, user, "confirmation")


def entail_key(claim: str, ev: Evidence) -> str:
    """How a verdict is kept on the answer (`Answer.entailed`), so the eval judges a draft again
    without asking the model again."""
    return f"{ev.paper.id}\t{strip_markers(claim)}"


def stance(llm: LLM, claim: str, title: str, passage: str) -> Stance | None:
    """Whether `passage` (the sentences of the paper's abstract that best match the claim)
    supports, contradicts or does not address `claim`; None when the model failed or replied
    something else. Shown those sentences, the default model judged dev claims better than shown
    the whole abstract, and without evaluating each abstract first (docs/evaluation.md,
    "Contradictions")."""
    user = ENTAIL_USER.format(title=title, passage=plain(passage), claim=strip_markers(claim))
    messages = [{"role": "system", "content": ENTAIL_SYSTEM}, {"role": "user", "content": user}]
    try:
        reply = llm.complete(messages, max_tokens=4, temperature=0.0).strip().upper()
    except LLMError as exc:
        log.warning("entailment failed: %s", exc)
        return None
    return next((s for s in Stance if reply.startswith(s.name[:5])), None)


def yes_no(llm: LLM, system: str, user: str, what: str) -> bool | None:
    """The model's one-word verdict in a short prompt of its own: True/False, or None when the
    reply is neither or the model failed."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    try:
        reply = llm.complete(messages, max_tokens=3, temperature=0.0).strip().lower()
    except LLMError as exc:
        log.warning("%s failed: %s", what, exc)
        return None
    return True if reply.startswith("yes") else False if reply.startswith("no") else None
