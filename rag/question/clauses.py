"""The clauses of a question: its parts that each need an answer, the two things asked the same
of ("How do A and B each ...?"), and the alternatives of "Which papers do X or Y?".

Only `rag.question.read` calls these; everything downstream reads the `Intent` they fill.
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


# As `_CLAUSE`, and a clause that starts with a preposition before its wh-word ("..., and at what
# head dimension ...", "..., and on which benchmark ..."), or ends in a colon before a list of two.
_QUESTION = re.compile(
    rf"\?\s+|,?\s+and\s+(?=(?:(?:at|on|in|for|by|from|with|to|of|under|over)\s+)?{_WH}\b)|;\s+", re.I
)


def questions(question: str) -> list[str]:
    """The questions a question holds, each answered on its own by an answer by parts
    (rag/answer/parts/): `parts`, also split before "and at what ...", "and on which ..."."""
    return parts(question, _QUESTION)


def parts(question: str, clause: re.Pattern[str] = _CLAUSE) -> list[str]:
    """The parts of a question that each need an answer (one part for a simple question); the
    other side of a comparison is a part of its own."""
    parts = [p.strip(" ?,.") for p in clause.split(question) if p and p.strip(" ?,.")]
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


# ---- two things compared ("How do A and B differ in ...?", "A vs B: ...", "Compare A with B")

# What joins the two things: "and", "vs", "versus", "compared with", "or" after "which of".
_JOINT = re.compile(r"\s+(?:and|vs\.?|versus|compared (?:with|to)|or|with|from)\s+", re.I)
# Words that say two things are set side by side; without one, "A and B" is two parts of a question.
_COMPARING = re.compile(
    r"\b(?:differ\w*|compar\w*|contrast\w*|vs\.?|versus|each|both|respectively|which of|between|"
    r"while|whereas|the other|same|unlike|than)\b"
    # "How do A and B deliver ...?": a plural verb before two things joined by "and".
    r"|\b(?:how|what|which|why|where|when) (?:[\w-]+ ){0,5}?(?:do|did|are|were|have)\b(?=.+\sand\s)",
    re.I,
)
# Where a described thing starts or ends: punctuation, wh-words and auxiliaries, the comparing words.
_EDGE_WORDS = frozenset(
    "what which how why where when who whom does do did are is was were have has can could would should "
    "compare comparing contrast between both each differ differs respectively of versus vs".split()
)
_ARTICLES = frozenset(("the", "a", "an"))


def _name_like(token: str) -> bool:
    """A token of a name: "INSEC", "SSR-connector", "Mufu", "(MRCJ)", "GPT-4o"."""
    word = token.strip("()\"'“”‘’,.:;?")
    return bool(word) and (is_name(word) or word[0].isupper() or word[0].isdigit())


def _subject_before(words: list[str]) -> list[str]:
    """The thing named just before the joint: a run of name tokens, else words back to an edge."""
    if words and _name_like(words[-1]):
        out = []
        while words and _name_like(words[-1]) and words[-1].lower() not in _EDGE_WORDS:
            out.insert(0, words.pop())
        if len(out) == 1 and out[0].startswith(
            "("
        ):  # "the multi-round jailbreak (MRCJ)": its description too
            return _subject_before(words) + out
        if words and words[-1].lower() in _ARTICLES:
            out.insert(0, words.pop())
        return out
    out = []
    while words and words[-1].lower() not in _EDGE_WORDS and not re.search(r"[,.;:?!]$", words[-1]):
        out.insert(0, words.pop())
    named = [i for i, w in enumerate(out) if _name_like(w)]
    if named and named[-1] < len(out) - 1:  # "does RRM reach and ...": the name, not its verb
        out = out[: named[-1] + 1]
    return out[-MAX_SUBJECT_WORDS:]


def _subject_after(words: list[str]) -> list[str]:
    """The thing named just after the joint: an article and a run of name tokens, else words up to
    an edge or punctuation."""
    lead = [words[0]] if words and words[0].lower() in _ARTICLES else []
    rest = words[len(lead) :]
    out: list[str] = []
    if rest and _name_like(rest[0]):
        for w in rest:
            if not _name_like(w) or w.lower() in _EDGE_WORDS:
                break
            out.append(w)
            if re.search(r"[,.;:?!]$", w):
                break
        return lead + out
    for w in rest:
        if w.lower() in _EDGE_WORDS:
            break
        out.append(w)
        if re.search(r"[,.;:?!]$", w) or len(out) >= MAX_SUBJECT_WORDS:
            break
    return lead + out


# "Which of A or B", "Which is larger, A or B", "whether A or B", "between A or B": one of two things.
_CHOICE = r"\b(?:which|whether) (?:of|is|are|one|has|have)\b|\bbetween\b"


# How a question describes a paper without naming it: "the paper revisiting VQ", "the ORPO method".
_DESCRIBED = re.compile(
    r"\b(?:paper|work|method|approach|model|framework|benchmark|dataset|study|system|algorithm|technique)s?\b",
    re.I,
)


def _a_paper(thing: str) -> bool:
    """Whether a thing set side by side reads as a paper's: named ("INSEC", "Talking Turns") or
    described as one ("the paper revisiting VQ"); not "correct and incorrect responses"."""
    words = [w for w in thing.split() if w.lower() not in _ARTICLES]
    return bool(content_words(thing)) and (
        any(_name_like(w) for w in words) or bool(_DESCRIBED.search(thing))
    )


def compared(question: str) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """The two things a question sets side by side and the question asked of each alone (the pair
    replaced by one of them), or None when it compares nothing ("What is X and how does Y work?"
    is two parts of one question)."""
    if not _COMPARING.search(question):
        return None
    for joint in _JOINT.finditer(question):
        word = joint.group().strip().lower()
        before = question[: joint.start()].split()
        if word == "or" and not re.search(_CHOICE, question[: joint.start()], re.I):
            continue
        if word == "from" and not re.search(r"\bdiffer\w*$", question[: joint.start()], re.I):
            continue
        if word == "with" and not re.search(
            r"\bcompar\w*\s+\S+(?:\s+\S+){0,8}$", question[: joint.start()], re.I
        ):
            continue
        if word == "from":  # "A differs from B": the thing before the verb
            before = before[:-1]
        first = _subject_before(list(before))
        second = _subject_after(question[joint.end() :].split())
        a, b = (" ".join(s).strip(" ,.;:?!\"'“”") for s in (first, second))
        if not (_a_paper(a) and _a_paper(b)) or a.lower() == b.lower():
            continue
        start = question.rfind(a, 0, joint.start())
        start = start if start >= 0 else joint.start()
        end = question.find(b, joint.end())
        end = end + len(b) if end >= 0 else joint.end()
        # Each alone: the pair's words between them kept ("does A reach compared with B?" -> "does B reach?").
        between = question[start + len(a) : joint.start()] if start < joint.start() else ""
        asked = tuple(question[:start] + s + between + question[end:] for s in (a, b))
        return (a, b), (asked[0], asked[1])
    return None
