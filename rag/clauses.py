"""The clauses of a question: its parts that each need an answer, the two things asked the same
of ("How do A and B each ...?"), and the alternatives of "Which papers do X or Y?".

Only `rag.questions.parse` calls these; everything downstream reads the `Intent` they fill.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.text import STOP_WORDS, content_words, is_name

# ---- the parts of a question

_WH = r"(?:what|which|how|why|where|when|who|does|do|did|is|are|can)"
# A new question inside the question: "..., and what ...", "...? How ...".
_CLAUSE = re.compile(rf"\?\s+|,?\s+and\s+(?={_WH}\b)|;\s+", re.I)
# The other side of a comparison: "compared with the baseline", "versus RM".
VERSUS = re.compile(r"\b(?:compared (?:with|to)|versus|vs\.?|relative to)\b", re.I)
# Coordinated things asked for: "how many recording hours and classes".
_COORD = re.compile(
    r"\b(how (?:many|much)|which|what)\s+([\w-]+(?:\s+[\w-]+)?)\s+and\s+([\w-]+(?:\s+[\w-]+)?)", re.I
)


def parts(question: str) -> list[str]:
    """The parts of a question that each need an answer (one part for a simple question); the
    other side of a comparison is a part of its own."""
    parts = [p.strip(" ?,.") for p in _CLAUSE.split(question) if p and p.strip(" ?,.")]
    out: list[str] = []
    for part in parts:
        m = _COORD.search(part)
        if m and not VERSUS.search(part):
            # The shared rest ("... does BirdSet contain") is said once, after the second thing.
            out += [
                f"{m.group(1)} {noun(m.group(2)) or m.group(2)}",
                f"{m.group(1)} {noun(m.group(3)) or m.group(3)}",
            ]
            continue
        v = VERSUS.search(part)
        if v and len(content_words(part[v.end() :])) >= 1:
            out += [part[: v.start()].strip(), part[v.end() :].strip()]
            continue
        out.append(part)
    return [p for p in out if content_words(p)] or [question]


# "How do CViT and PIG each ...?", "SPPO and the ORPO paper both avoid X. What does each rely on?":
# two named things, each asked the same. The first starts after the last verb or wh-word before
# "and" ("Which models are Addax and OwLore each evaluated on?" -> "Addax").
_EACH = re.compile(r"\s+(?:each|both)\b", re.I)
_SUBJECT_LEAD = re.compile(
    r"^.*(?:[,.;:?]\s+|\b(?:do|does|did|are|is|were|was|have|has|how|what|which)\s+)", re.I | re.S
)
MAX_SUBJECT_WORDS = 12


def subjects(question: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The two things a question asks the same of ("How do A and B each ...?"), and the question
    asked of each alone ("How do A ...?", "How do B ...?"); nothing for any other question."""
    for joint in re.finditer(r"\s+and\s+", question):
        each = _EACH.search(question, joint.end())
        if not each:
            continue
        second = question[joint.end() : each.start()].strip()
        lead = _SUBJECT_LEAD.match(question[: joint.start()])
        start = lead.end() if lead else 0
        first = question[start : joint.start()].strip()
        if not all(0 < len(s.split()) <= MAX_SUBJECT_WORDS and content_words(s) for s in (first, second)):
            continue
        rest = question[each.end() :]
        asked = tuple(
            question[:start] + s + re.sub(r"\beach\b", lambda _, s=s: s, rest, flags=re.I)
            for s in (first, second)
        )
        return (first, second), asked
    return (), ()


def noun(phrase: str) -> str:
    """The words of a noun phrase up to the first stop word ("classes does" -> "classes")."""
    words = []
    for word in phrase.split():
        if word.lower() in STOP_WORDS:
            break
        words.append(word)
    return " ".join(words)


# ---- "Which papers do X or Y?"

_OR = re.compile(r"\s+or\s+", re.I)
_PHRASE_END = re.compile(r"\s+(?:or|and)\s+|[,;?]")
# Endings of nouns and adjectives ("forgetting", "compression", "visual", "toolkits", "masked"):
# a word without one that starts a long second alternative is read as a verb ("adapt", "give").
_NOUN_ENDINGS = tuple("ing ion al s ed ity ment ness ence ance ics ive ous er or".split())


def _starts_predicate(words: Sequence[str]) -> bool:
    """Whether an alternative reads as a verb and its object ("adapt CLIP with few labels",
    "fine-tune SAM for several tasks"), not as a noun phrase ("problem instances", "3D humans from
    video", "with masked image modeling")."""
    if len(words) < 3 or words[0].lower() in STOP_WORDS or is_name(words[0]):
        return False
    last = words[0].lower().split("-")[-1]  # "fine-tune" -> "tune", "class-incremental" -> "incremental"
    suffixed = any(last.endswith(e) and len(last) - len(e) >= 3 for e in _NOUN_ENDINGS)
    return last.isalpha() and (not suffixed or last.endswith("ss"))  # "process", "address"


def alternatives(question: str, asks: re.Match[str] | None) -> list[str]:
    """A question for several papers that joins two descriptions by "or" ("Which papers study
    machine unlearning or forgetting knowledge?"), asked once for each description: each may be
    another paper's, and one search for both favours papers that mention both. The first
    alternative is taken to be as long as the second (at most two words), unless the second reads
    as a verb and its object ("Which papers fine-tune SAM or adapt CLIP with few labels?")."""
    head = _OR.search(question)
    if not asks or not head:
        return []
    end = _PHRASE_END.search(question, head.end())
    b_end = end.start() if end else len(question)
    second = question[head.end() : b_end].split()
    before = question[: head.start()].split()
    # The rest of the question after the second alternative, unless a third one follows.
    rest = question[b_end:] if not end or not end.group().strip().isalpha() else "?"
    if _starts_predicate(second) and len(content_words(question[asks.end() : head.start()])) >= 2:
        return [f"{' '.join(before)}{rest}", f"{question[: asks.end()]} {' '.join(second)}{rest}"]
    while second and second[0].lower() in STOP_WORDS:
        second.pop(0)
    first = before[-min(len(second), 2) :] if second else []
    # "Which papers improve or build on LoRA": the "or" joins verbs, not two descriptions.
    if (
        not second
        or len(content_words(" ".join(first))) < len(first)
        or "papers" in (w.lower() for w in first)
    ):
        return []
    prefix = " ".join(before[: len(before) - len(first)])
    return [f"{' '.join(before)}{rest}", f"{prefix} {' '.join(second)}{rest}"]
