"""A survey question the question reader is unsure of, read again by the local model: a terse
"PINNs: what's out there?", a topic before a colon, a wording unlike the reader's training. The
model writes the topic and its other names as JSON under a grammar (one short generation, no
free text to parse), and the list is built from that reading. Status and area stay with the
filter table (`rag.said`): they are a closed vocabulary the model need not guess.

When: the reader asked for a list but read no topic, or its least sure word's p is below
`survey.rewrite_below` (chosen on the dev survey sets)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace

from rag.questions import Intent

log = logging.getLogger(__name__)

# The reply: {"topic": "...", "aliases": ["...", ...]} and nothing else (at most three aliases).
GRAMMAR = r"""
root ::= "{\"topic\": " str ", \"aliases\": [" ( str ( ", " str )? ( ", " str )? )? "]}"
str ::= "\"" [^"\\\n]+ "\""
"""
SYSTEM = (
    "You read a question that asks for research papers and write the research topic it asks about as "
    "JSON. topic: the topic in the question's own words, as a short noun phrase, without words about "
    "papers, conferences, status or counting. aliases: the topic's other names only if you are sure "
    "(an acronym's long form, a long form's acronym); else an empty list."
)
# Worked examples on topics no gold set uses.
EXAMPLES = (
    ("GNNs: anything new this year?", {"topic": "GNNs", "aliases": ["graph neural networks"]}),
    ("Graph transformer papers at ICLR 2025?", {"topic": "graph transformers", "aliases": []}),
    (
        "Show me the orals where people align LLMs with human feedback, e.g. RLHF or DPO.",
        {"topic": "aligning LLMs with human feedback", "aliases": ["RLHF", "DPO"]},
    ),
    ("What's been submitted on weather forecasting?", {"topic": "weather forecasting", "aliases": []}),
)
MAX_TOKENS = 60


@dataclass(frozen=True)
class Rewrite:
    """The model's reading of a survey question."""

    topic: str
    aliases: tuple[str, ...] = ()


def unsure(intent: Intent, below: float) -> bool:
    """Should the model read this survey question again?"""
    return intent.asks_for_papers and (not intent.topic or intent.topic_confidence < below)


def messages(question: str) -> list[dict[str, str]]:
    out = [{"role": "system", "content": SYSTEM}]
    for q, a in EXAMPLES:
        out += [{"role": "user", "content": q}, {"role": "assistant", "content": json.dumps(a)}]
    return out + [{"role": "user", "content": question}]


def parse_reply(reply: str, question: str) -> Rewrite | None:
    """The reply as a `Rewrite`; None when it is no JSON or names no topic of the question's size."""
    try:
        data = json.loads(reply)
    except json.JSONDecodeError:
        return None
    topic = str(data.get("topic", "")).strip(" .?!:;,")
    if not topic or len(topic) > max(80, len(question)):
        return None
    aliases = tuple(
        dict.fromkeys(
            a.strip() for a in data.get("aliases", []) if a.strip() and a.strip().lower() != topic.lower()
        )
    )
    return Rewrite(topic, aliases)


def rewrite(llm, question: str) -> Rewrite | None:
    """The model's reading of `question` (None when the model fails or writes nothing usable)."""
    from rag.llm import LLMError

    try:
        reply = llm.complete(messages(question), grammar=GRAMMAR, max_tokens=MAX_TOKENS, temperature=0.0)
    except LLMError as exc:
        log.warning("survey rewrite failed: %s", exc)
        return None
    return parse_reply(reply, question)


def rewritten(intent: Intent, r: Rewrite) -> Intent:
    """`intent` with the model's topic and other names (the question's own alternatives kept)."""
    also = tuple(dict.fromkeys(a for a in (*r.aliases, *intent.also) if a.lower() != r.topic.lower()))
    return replace(intent, topic=r.topic, also=also)
