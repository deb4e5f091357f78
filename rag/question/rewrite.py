"""A survey question the question reader is unsure of, read again by the local model: a terse
"PINNs: what's out there?", a topic before a colon, a wording unlike the reader's training. The
model writes the topic and its other names as JSON under a grammar (one short generation, no
free text to parse), and the list is built from that reading. Status and area stay with the
filter table (`rag.question.said`): they are a closed vocabulary the model need not guess.

When: the question reads as a list but the reader read no topic in it (the wording rules gave one,
or none), or its least sure word's p is below `survey.rewrite_below`; or the reader read it as no
list with a p(list) of at least `survey.rewrite_kind_above` (an unusual list question: "MCMC: what's
out there?"). The model's reading then stands in for the reader's: the question is parsed again
with it (`rag.question.read`), so its filters are read as a list question's."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from rag.question import Intent
from rag.types import Step

log = logging.getLogger(__name__)

# The reply: {"list": true, "topic": "...", "aliases": ["...", ...]} and nothing else (at most
# three aliases; no topic when it asks for no list).
GRAMMAR = r"""
root ::= "{\"list\": " ( "true" | "false" ) ", \"topic\": " str ", \"aliases\": [" ( str ( ", " str )? ( ", " str )? )? "]}"
str ::= "\"" [^"\\\n]* "\""
"""
SYSTEM = (
    "You read a question about research papers and write, as JSON, whether it asks for the papers on a "
    "research topic (list: true) or asks something else, such as a fact from one paper (list: false). "
    "topic: the research topic in the question's own words, as a short noun phrase, without words about "
    "papers, conferences, status, area or track, or counting (empty when list is false). aliases: the topic's other names "
    "only if you are sure (an acronym's long form, a long form's acronym); else an empty list."
)
# Worked examples on topics no gold set uses.
EXAMPLES = (
    ("GNNs: anything new this year?", {"list": True, "topic": "GNNs", "aliases": ["graph neural networks"]}),
    ("Graph transformer papers at ICLR 2025?", {"list": True, "topic": "graph transformers", "aliases": []}),
    (
        "Show me the orals where people align LLMs with human feedback, e.g. RLHF or DPO.",
        {"list": True, "topic": "aligning LLMs with human feedback", "aliases": ["RLHF", "DPO"]},
    ),
    (
        "In the reinforcement learning area, which papers do world models for planning?",
        {"list": True, "topic": "world models for planning", "aliases": []},
    ),
    (
        "How many hours of audio does the BirdSet training set contain?",
        {"list": False, "topic": "", "aliases": []},
    ),
    (
        "Sparse autoencoders for interpretability, i.e. dictionary learning on activations: what's there?",
        {"list": True, "topic": "sparse autoencoders for interpretability", "aliases": []},
    ),
)
MAX_TOKENS = 60


@dataclass(frozen=True)
class Rewrite:
    """The model's reading of a survey question."""

    topic: str
    aliases: tuple[str, ...] = ()
    listing: bool = True  # it asks for the papers on the topic


def unsure(intent: Intent, below: float, kind_above: float = 1.0) -> bool:
    """Should the model read this question again? A list question whose topic the reader did not
    read or was unsure of; a question it read as no list with p(list) in [`kind_above`, 0.5)."""
    if intent.asks_for_papers:
        if intent.listing_p is not None and intent.listing_p < kind_above:
            return (
                False  # the reader is sure it names no topic: papers described ("do X or Y"), each searched
            )
        return not intent.topic or intent.topic_confidence < below
    p = intent.listing_p
    return p is not None and kind_above <= p < 0.5 and intent.kind.value in ("one_paper", "which_paper")


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
    listing = bool(data.get("list", True))
    topic = str(data.get("topic", "")).strip(" .?!:;,")
    if not listing:
        return Rewrite("", (), listing=False)
    if not topic or len(topic) > max(80, len(question)):
        return None
    aliases = tuple(
        dict.fromkeys(
            a.strip() for a in data.get("aliases", []) if a.strip() and a.strip().lower() != topic.lower()
        )
    )
    return Rewrite(topic, aliases, listing=True)


def rewrite(llm, question: str) -> Rewrite | None:
    """The model's reading of `question` (None when the model fails or writes nothing usable)."""
    from rag.llm import LLMError

    try:
        reply = llm.complete(messages(question), grammar=GRAMMAR, max_tokens=MAX_TOKENS, temperature=0.0)
    except LLMError as exc:
        log.warning("survey rewrite failed: %s", exc)
        return None
    return parse_reply(reply, question)


class _Read:
    """A question reader that gives the model's reading (parse reads the question with it)."""

    def __init__(self, reading):
        self.reading = reading

    def read(self, question: str):
        return self.reading


def rewritten(intent: Intent, r: Rewrite, history=()) -> Intent:
    """The question parsed again with the model's reading in the reader's place (its topic and
    other names; the question's own alternatives kept), as a list question."""
    from rag.question import read
    from rag.question.reader import Reading

    also = tuple(dict.fromkeys(a for a in (*r.aliases, *intent.also) if a.lower() != r.topic.lower()))
    confidence = intent.topic_confidence if intent.asks_for_papers else 0.0
    new = read(intent.question, history, reader=_Read(Reading(1.0, r.topic, also, confidence)))
    # The conversation was decided on the first reading; a second reading of the topic keeps it.
    return replace(new, topic_confidence=confidence, listing_p=intent.listing_p, query=intent.query,
                   follows=intent.follows, follow_p=intent.follow_p, follow_why=intent.follow_why,
                   about=intent.about, referents=intent.referents)  # fmt: skip


def reread(intent: Intent, llm: Callable[[], object], history=()) -> tuple[Intent, Step]:
    """The question read again by the model (`llm()` gives it, loaded only now), and the trace step
    saying which reading the answer is built from."""
    from rag.llm import LLMError

    if not intent.asks_for_papers:
        why = f"the question reader read no list (p {intent.listing_p or 0:.2f})"
    elif intent.topic_confidence <= 0 or not intent.topic:
        why = "the question reader read no topic"
    else:
        why = f"the question reader read {intent.topic!r} (sure to {intent.topic_confidence:.2f})"
    try:
        r = rewrite(llm(), intent.question)
    except LLMError as exc:
        log.warning("survey rewrite: no model: %s", exc)
        r = None
    if r is None or not r.listing:
        said = "no list" if r is not None else "nothing usable"
        return intent, Step(
            "survey", "kept the reader's reading", intent.topic, f"{why}; the model read {said}"
        )
    new = rewritten(intent, r, history)
    # A filter the reader's parse read stays, should the model's topic have swallowed its words.
    new = replace(new, filters={**intent.filters, **new.filters})
    if _only_filter_words(new):
        return intent, Step("survey", "kept the reader's reading", intent.topic,
                            f"{why}; the model read the filter as the topic ({new.topic!r})")  # fmt: skip
    named = ", ".join(new.also)
    return new, Step("survey", "rewritten", new.topic + (f" (also: {named})" if named else ""),
                     why + "; the list is built from the model's reading")  # fmt: skip


def _only_filter_words(intent: Intent) -> bool:
    """Does the topic say nothing but the question's status or area ("physical-sciences
    applications area")?"""
    from rag import text as tx

    said = (
        " ".join(v for values in intent.filters.values() for v in values) + " area track papers submissions"
    )
    words = tx.content_words(intent.topic)
    return not words or words <= tx.content_words(said)
