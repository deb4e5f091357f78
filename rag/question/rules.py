"""The wording rules of a question's reading: what it asks for (one paper's content, which
paper, several papers, a comparison, a follow-up), its parts, the names and words it uses, the
alternatives of "Which papers do X or Y?". The trained reader (`reader`) gives the list and its
topic, the conversation's decision (`conversation`) whether it follows up the last answer.
Word-level text handling (sentences, words, names) is `rag.text`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rag import text as tx
from rag.question import clauses
from rag.question.conversation import Binding, FollowUp, Last, standalone_query
from rag.question.intent import Intent, Kind, Wanted
from rag.question.said import said
from rag.text import STOP_WORDS, content_words

if TYPE_CHECKING:
    from rag.question.reader import Reader, Reading
    from rag.types import Turn


def parse(
    question: str,
    history: Sequence[Turn] = (),
    reader: Reader | None = None,
    follow: FollowUp | None = None,
) -> Intent:
    """The `Intent` of `question`, asked after the turns of `history`. `reader` (the trained
    question reader) decides whether it asks for a list of papers and on what topic; `follow`
    (the conversation's decision) whether it follows up the last answer (without it: a pronoun
    does)."""
    reading = reader.read(question) if reader is not None else None
    text = said(question).rest  # the rules read the question without its status words
    asks = _ASKS_FOR_PAPER.search(text)
    survey = _SURVEY.search(text)
    several = bool(survey) or (
        bool(asks)
        and (asks.group(1) or asks.group(2)).lower()
        in ("papers", "works", "studies", "articles", "submissions")
    )
    # The trained reader finds lists however they are worded; "Which papers <do X or Y>?" is one
    # too, even where it reads no topic in it (the papers are described, and each is searched).
    several = several or bool(reading and reading.asks_for_list)
    stated = said(question, reading.topic if reading else "", listing=several)
    text, filters = stated.rest, stated.filters
    asks = _ASKS_FOR_PAPER.search(text) or (survey if several else None)
    points = _points_at_paper(text, bool(asks) or several)
    refers = bool(_REFERS_BACK.search(text))
    last = Last.of(history)
    binding = (
        follow.bind(text, last, asks_paper=bool(asks) or several, listing=reading.listing if reading else 0.0)
        if follow is not None and last is not None
        else _pronoun_binding(last, refers, points)
    )
    subjects, asked_each = ((), ()) if asks or several else clauses.subjects(text)
    like = _LIKE.match(text)
    if like:
        kind = Kind.SIMILAR
    elif _TOPICS.search(text) and not history:
        kind = Kind.TOPICS
    elif several:
        kind = Kind.SEVERAL_PAPERS
    elif asks:
        kind = Kind.WHICH_PAPER
    elif subjects or clauses.VERSUS.search(text):
        kind = Kind.COMPARISON
    elif binding.follows:
        kind = Kind.FOLLOW_UP
    else:
        kind = Kind.ONE_PAPER
    topic, also, alternatives = _listed(text, asks, reading) if kind is Kind.SEVERAL_PAPERS else ("", (), ())
    if kind is Kind.SEVERAL_PAPERS and not topic:  # no reader, or it found no topic words
        topic, area = _topic(text[asks.end() :]) if asks else ("", "")
        if area:
            filters = {**filters, "area": (area.lower(),)}
    query = standalone_query(text, last, binding)
    pair = None if asks or several or like else clauses.compared(text)
    # `compared` reads more wordings; `subjects` ("A and B each ...") where it reads none.
    compared, compared_asked = pair or ((subjects, asked_each) if subjects else ((), ()))
    return Intent(
        question=question,
        query=query,
        kind=kind,
        parts=asked_each or tuple(clauses.parts(text)),
        names=frozenset(tx.names(query)),
        words=frozenset(content_words(text)),
        alternatives=alternatives,
        described=tuple(_description(q) for q in (text, *alternatives)),
        counts=() if asks or several else tuple(_counted(text)),
        yes_no=bool(_YES_NO.match(text)),
        refers_back=refers,
        points_at_paper=points,
        # A follow-up about the paper's own content reads that paper alone; one about others
        # ("Do other papers improve on it?") searches beyond it.
        about=binding.paper
        if kind is Kind.FOLLOW_UP and not _BEYOND.search(text)
        else (_only(last) if like and _THIS_ONE.match(like.group("title")) else None),
        referents=binding.papers if binding.follows else (),
        follows=binding.follows,
        follow_p=binding.p if follow is not None and last is not None else None,
        follow_why=binding.why,
        filters=filters,
        subjects=subjects,
        topic=topic,
        also=also,
        topic_confidence=_topic_confidence(reading, topic),
        listing_p=reading.listing if reading is not None else None,
        counting=bool(_COUNTING.search(text)),
        wants=_wanted(text, bool(asks) or several),
        like=like.group("title").strip(" \"'“”‘’") if like else "",
        compared=compared,
        compared_asked=compared_asked,
        questions=tuple(clauses.questions(text)),
    )


def _topic_confidence(reading: Reading | None, topic: str) -> float:
    if reading is None:
        return 1.0
    return reading.confidence if topic and reading.asks_for_list and reading.topic == topic else 0.0


# ---- what is asked for


def _listed(
    text: str, asks: re.Match[str] | None, reading: Reading | None
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A list question's topic, the other names it gives the topic, and the question asked once per
    name. The reader's spans when it read one; else the wording rules' ("Which papers do X or Y?")."""
    if reading is None or not reading.topic or not reading.asks_for_list:
        alternatives = tuple(clauses.alternatives(text, asks)) if asks else ()
        return "", (), alternatives
    alternatives = tuple(text.replace(reading.topic, a, 1) for a in reading.also if reading.topic in text)
    return reading.topic, reading.also, alternatives


# "Which paper", and with up to three words saying what kind ("Which offline RL paper ..."); not
# "works" after such words ("What learning rate works best?" asks for no paper).
_KIND_WORD = (
    r"(?!(?:is|are|was|were|does|do|did|has|have|the|a|an|this|that|these|those|of|in|on|for|to|by|"
    r"with|from|its|their|papers?|works?|stud(?:y|ies)|articles?|submissions)\b)[\w-]+ "
)
_ASKS_FOR_PAPER = re.compile(
    r"\b(?:(?:which|what) |(?:is|are) there (?:a |an |any )?|any )"
    rf"(?:(papers?|works?|stud(?:y|ies)|articles?|submissions)|(?:{_KIND_WORD}){{1,3}}(papers?|stud(?:y|ies)|articles?|submissions))\b",
    re.I,
)
# Other ways to ask for every paper on something: "What is there on X?", "List the papers on X",
# "How many papers study X?", "What work is there on X?".
_SURVEY = re.compile(
    r"\b(?:what (?:else )?is there (?:on|about)|what (?:work|research) is there (?:on|about)|"
    r"(?:list|show|find|name)(?: me)? (?:the |all |all the )?(?:papers|works|studies|articles|submissions)"
    r"(?: (?:on|about|that|which|using|with))?|how many (?:\w+ )?(?:papers|works|studies|submissions))\b",
    re.I,
)
# Asks what the topics are and how big: "What are the biggest topics among the orals?", "Which
# themes are most common?", "What are the main research areas?"
_TOPICS = re.compile(
    r"\b(?:biggest|largest|main|major|top|dominant|hottest|most (?:common|popular|frequent))\s+"
    r"(?:research\s+)?(?:topics|themes|areas|directions|trends)\b"
    r"|\b(?:what|which)\s+(?:are\s+the\s+)?(?:research\s+)?(?:topics|themes)\b"
    r"\s+(?:are|is|do|does)?\s*(?:the\s+)?(?:most|biggest|largest|common|covered|there)",
    re.I,
)
_LIKE = re.compile(
    r"^\W*(?:(?:show|find|list|give)(?: me)?\s+|(?:what|which)\s+(?:other\s+)?)?(?:(?:other|more)\s+)?"
    r"(?:papers|works|submissions)\s+(?:are\s+)?(?:like|similar to|near|close to)\s+(?P<title>.+?)\W*$",
    re.I,
)
_THIS_ONE = re.compile(r"^(?:this|that|the last)(?: one| paper)?$|^it$", re.I)  # "papers like this one"
_COUNTING = re.compile(r"\bhow many (?:\w+ )?(?:papers|works|studies|submissions)\b", re.I)
# The verbs of a survey question before its topic: "use or analyse X", "work on X", "are about X".
_LEAD_VERBS = (
    r"(?:mainly )?(?:use|uses|using|used|study|studies|studying|propose|proposes|apply|applies|applying|"
    r"build on|builds on|work on|works on|work with|works with|analy[sz]e|analy[sz]es|address|addresses|"
    r"tackle|explore|investigate|develop|introduce|extend|estimate|evaluate on|focus on|deal with|"
    r"employ|leverage|are about|is about|do|does)"
)
_TOPIC_LEAD = re.compile(
    rf"^(?:\s*(?:are there|is there|there are|that|which|{_LEAD_VERBS}|on|about|with|or|and)\b,?)+", re.I
)
# "Which papers in the optimization area study X?": the primary area the papers must be in.
_AREA = re.compile(rf"^\s*in (?:the )?(?P<area>.+?)(?: area)?\s+(?={_LEAD_VERBS}\b)", re.I)


def _topic(rest: str) -> tuple[str, str]:
    """What a survey question's papers are about, and the area it names: the rest of the question
    without its leading verbs ("use or analyse sharpness-aware minimization (SAM)?" ->
    "sharpness-aware minimization (SAM)"; "in the optimization area study X" -> X, "optimization")."""
    area = _AREA.match(rest)
    if area:
        rest = rest[area.end() :]
    topic = _TOPIC_LEAD.sub("", rest).strip(" ?.!,;:")
    # "how pretraining data is selected" describes what papers do; it names no topic to list.
    if re.match(r"(?:how|what|why|whether|which|when|where|who)\b", topic, re.I):
        topic = ""
    return topic, area.group("area").strip() if area else ""


_YES_NO = re.compile(r"^\W*(does|do|did|is|are|was|were|can|could|has|have|will|would|should)\b", re.I)


def _description(question: str) -> str:
    """What a which-paper question says the paper is or does ("Which work shows that pruned
    networks resist noise?" -> "shows that pruned networks resist noise"); the question itself
    when it does not ask for a paper."""
    m = _ASKS_FOR_PAPER.search(question)
    if not m:
        return question
    rest = re.sub(r"^\s*(?:that|which|on|about)\s+", "", question[m.end() :], flags=re.I)
    return rest.strip().rstrip("?").strip() or question


_QUANTITY = re.compile(r"\bhow (?:many|much) ((?:[\w-]+ ){0,1}[\w-]+)", re.I)


# A quantity asked for: "how many/much X", "how fast/large/long", "by how much", "what percentage".
# The English wh-forms that ask for an amount, not a list of phrasings of one question.
_AMOUNT = re.compile(
    r"\bhow (?:many|much|fast|large|big|long|small|far|often)\b|"
    r"\bwhat (?:percentage|fraction|proportion|share|number)\b",
    re.I,
)


def _wanted(question: str, asks_for_paper: bool) -> Wanted:
    """The kind of thing the answer must contain. A which-paper question wants a paper whatever
    else it says ("Which paper reports how many ...?"); "how many papers" counts a list."""
    if asks_for_paper or _COUNTING.search(question):
        return Wanted.PAPER
    if _AMOUNT.search(question):
        return Wanted.NUMBER
    if _YES_NO.match(question):
        return Wanted.YES_NO
    return Wanted.ANY


def _counted(question: str) -> list[str]:
    """For "how many X" / "how much X": the words of X, up to the first stop word."""
    m = _QUANTITY.search(question)
    focus: list[str] = []
    for word in m.group(1).split() if m else []:
        if word.lower() in STOP_WORDS:
            break
        focus.append(word)
    return focus


# ---- the conversation

_REFERS_BACK = re.compile(
    r"\b(it|its|they|their|them|this|that|these|those|the paper|the authors|this work|the method|"
    r"the model|the approach|he|she)\b",
    re.I,
)
# Narrower than `_REFERS_BACK`: a bare "that" or "this" is as often a relative pronoun ("a method
# that prunes"), and answering from one paper needs the question to be about that paper.
_POINTS_AT_PAPER = re.compile(
    r"\b(it|its|they|their|them|the (?:paper|authors|work|method|approach)|"
    r"(?:this|that) (?:paper|work|method|approach|model))\b",
    re.I,
)
_BEYOND = re.compile(r"\b(other|others|another|else|compared?|versus|vs|papers|works|studies)\b", re.I)


def _points_at_paper(question: str, asks_for_paper: bool) -> bool:
    """The question is about the paper just discussed ("Which models did they test?"), and not a
    new search for papers or a comparison with others ("Do other papers do this?", "How does it
    compare with LoRA?", "Which paper proposes a method that ...?")."""
    return bool(_POINTS_AT_PAPER.search(question)) and not _BEYOND.search(question) and not asks_for_paper


def _pronoun_binding(last: Last | None, refers: bool, points: bool) -> Binding:
    """Without the learned decision: a pronoun makes a follow-up, about the one paper the last
    answer cited when the pronoun points at a paper."""
    if last is None or not refers:
        return Binding(False, why="no pronoun" if last else "the first question")
    one = _only(last)
    return Binding(True, 1.0, (one,) if points and one else (), "a pronoun")


def _only(last: Last | None):
    """The one paper the last answer cited; None when it cited none or several."""
    return last.papers[0] if last is not None and len(last.papers) == 1 and not last.listed else None
