"""What a question asks for: a paper, several papers, or about the paper of an earlier turn; what
it says the paper does; and the alternatives of "Which papers do X or Y?". Word-level text
handling (sentences, words, names) is `rag.text`'s."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.text import STOP_WORDS, content_words, is_name

_ASKS_FOR_PAPER = re.compile(
    r"\b(?:(?:which|what) |(?:is|are) there (?:a |an |any )?|any )(papers?|works?|stud(?:y|ies)|articles?)\b",
    re.I,
)


def asks_for_paper(question: str) -> bool:
    """The answer is a paper ("Which paper introduces ...", "What work studies ...", "Is there a
    paper on ...")."""
    return bool(_ASKS_FOR_PAPER.search(question))


def asks_for_papers(question: str) -> bool:
    """The answer is several papers ("Which papers study ...", "What works ...")."""
    m = _ASKS_FOR_PAPER.search(question)
    return bool(m) and m.group(1).lower() in ("papers", "works", "studies", "articles")


def paper_description(question: str) -> str:
    """What a which-paper question says the paper is or does ("Which work shows that pruned
    networks resist noise?" -> "shows that pruned networks resist noise"); the question itself
    when it does not ask for a paper."""
    m = _ASKS_FOR_PAPER.search(question)
    if not m:
        return question
    rest = re.sub(r"^\s*(?:that|which|on|about)\s+", "", question[m.end() :], flags=re.I)
    return rest.strip().rstrip("?").strip() or question


_REFERS_BACK = re.compile(
    r"\b(it|its|they|their|them|this|that|these|those|the paper|the authors|this work|the method|"
    r"the model|the approach|he|she)\b",
    re.I,
)
# Narrower than `refers_back`: a bare "that" or "this" is as often a relative pronoun ("a method
# that prunes"), and answering from one paper needs the question to be about that paper.
_POINTS_AT_PAPER = re.compile(
    r"\b(it|its|they|their|them|the (?:paper|authors|work|method|approach)|"
    r"(?:this|that) (?:paper|work|method|approach|model))\b",
    re.I,
)
_BEYOND = re.compile(r"\b(other|others|another|else|compared?|versus|vs|papers|works|studies)\b", re.I)


def refers_back(question: str) -> bool:
    """The question points at something said before ("what datasets did they use?")."""
    return bool(_REFERS_BACK.search(question))


def points_at_paper(question: str) -> bool:
    """The question is about the paper just discussed ("Which models did they test?"), and not a
    new search for papers or a comparison with others ("Do other papers do this?", "How does it
    compare with LoRA?", "Which paper proposes a method that ...?")."""
    return (
        bool(_POINTS_AT_PAPER.search(question))
        and not _BEYOND.search(question)
        and not asks_for_paper(question)
    )


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


def alternatives(question: str) -> list[str]:
    """A question for several papers that joins two descriptions by "or" ("Which papers study
    machine unlearning or forgetting knowledge?"), asked once for each description ("... study
    machine unlearning?", "... study forgetting knowledge?"): each may be another paper's, and one
    search for both favours papers that mention both. The first alternative is taken to be as
    long as the second (at most two words): "zeroth-order fine-tuning or for visual prompting";
    unless the second reads as a verb and its object: "Which papers fine-tune SAM or adapt CLIP
    with few labels?" asks "Which papers fine-tune SAM?" and "Which papers adapt CLIP with few
    labels?"."""
    asks = _ASKS_FOR_PAPER.search(question)
    head = asks_for_papers(question) and _OR.search(question)
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
