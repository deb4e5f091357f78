"""A question parsed once into an `Intent`: what it asks for (one paper's content, which paper,
several papers, a comparison, a follow-up), its parts, the names and words it uses, the
alternatives of "Which papers do X or Y?", and the paper of an earlier turn it points back to.

`parse` is the only reader of the question's wording: retrieval, evidence, trust and completion
take the `Intent`. Word-level text handling (sentences, words, names) is `rag.text`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from rag import clauses
from rag import text as tx
from rag.said import said
from rag.text import STOP_WORDS, content_words

if TYPE_CHECKING:
    from rag.judge.reader import Reader, Reading
    from rag.types import Paper, Turn


class Kind(StrEnum):
    """What the answer is."""

    ONE_PAPER = "one_paper"  # a fact from a paper's content
    WHICH_PAPER = "which_paper"  # a paper ("Which paper introduces ...?")
    SEVERAL_PAPERS = "several_papers"  # papers ("Which papers study ...?")
    COMPARISON = "comparison"  # one thing against another ("... compared with the baseline?")
    FOLLOW_UP = "follow_up"  # about what the conversation was about ("Which models did they test?")
    TOPICS = "topics"  # the index's topics and their sizes ("What are the biggest topics among the orals?")
    SIMILAR = "similar"  # the papers nearest a named one ("Papers like Attention Sinks in LLMs")


class Wanted(StrEnum):
    """What kind of thing an answer must contain to answer at all (beside the facts themselves)."""

    PAPER = "paper"  # "Which paper ...?": a paper
    NUMBER = "number"  # "How many ...?", "What percentage ...?", "How fast ...?": a number
    YES_NO = "yes_no"  # "Does ...?": yes or no, and why
    ANY = "any"  # what, how, why: a description; no kind to test by its form


@dataclass(frozen=True)
class Intent:
    """One question, parsed. `question` is as asked; `query` is what is searched (a follow-up
    names the paper it points back to)."""

    question: str
    query: str
    kind: Kind
    parts: tuple[str, ...]  # the parts that each need an answer (one for a simple question)
    names: frozenset[str]  # methods, models, datasets, proper nouns of the query (`text.names`)
    words: frozenset[str]  # content stems (`text.content_words`)
    alternatives: tuple[str, ...]  # "Which papers do X or Y?" asked once for X and once for Y
    described: tuple[str, ...]  # what the paper asked for is said to be or do, per variant
    counts: tuple[str, ...]  # "how many X": the words of X (none when a paper is asked for)
    yes_no: bool  # "Does ...?", "Is ...?"
    refers_back: bool  # "they", "it", "the paper": points at something said before
    points_at_paper: bool  # about the paper just discussed, not a new search for papers
    subjects: tuple[str, ...] = ()  # "How do A and B each ...?": the named things, one part each
    about: Paper | None = None  # the one paper the last answer cited, when the question points at it
    filters: dict[str, tuple[str, ...]] = field(default_factory=dict)  # said in words: "Which oral papers"
    topic: str = ""  # what the papers asked for are about ("Which papers use KANs?" -> "KANs")
    also: tuple[str, ...] = ()  # other names of the topic the question gives ("X, such as Y", "X or Y")
    # How sure the question reader was of the topic (`Reading.confidence`); 0 when it read none and
    # the wording rules gave the topic, 1 without a reader.
    topic_confidence: float = 1.0
    listing_p: float | None = None  # the reader's p(the question asks for a list of papers)
    counting: bool = False  # "How many papers ...?": the answer is the count of the list
    wants: Wanted = Wanted.ANY  # the kind of thing an answer must contain (`complete.lacks_wanted`)
    like: str = ""  # "Papers like <title>": the title (or words of it) as said
    # Two things set side by side, in any wording ("A vs B: ...", "How does A differ from B?"), and
    # the question asked of each alone: what the answer by parts (rag/answer/parts/) answers.
    compared: tuple[str, ...] = ()
    compared_asked: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()  # the questions it holds, each answered on its own (`clauses.questions`)

    @property
    def asks_for_paper(self) -> bool:
        """The answer is a paper or papers."""
        return self.kind in (Kind.WHICH_PAPER, Kind.SEVERAL_PAPERS)

    @property
    def asks_for_papers(self) -> bool:
        return self.kind is Kind.SEVERAL_PAPERS

    @property
    def variants(self) -> tuple[str, ...]:
        """The question and each of its alternatives."""
        return (self.question, *self.alternatives)

    def to_json(self) -> dict:
        return {
            "kind": self.kind.value,
            "query": self.query,
            "parts": list(self.parts),
            "names": sorted(self.names),
            "alternatives": list(self.alternatives),
            "counts": list(self.counts),
            "subjects": list(self.subjects),
            "about": self.about.id if self.about else None,
            "filters": {k: list(v) for k, v in self.filters.items()},
            "wants": self.wants.value,
            "compared": list(self.compared),
        }


def parse(question: str, history: Sequence[Turn] = (), reader: Reader | None = None) -> Intent:
    """The `Intent` of `question`, asked after the turns of `history`. `reader` (the trained
    question reader) decides whether it asks for a list of papers and on what topic."""
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
    elif history and refers:
        kind = Kind.FOLLOW_UP
    else:
        kind = Kind.ONE_PAPER
    topic, also, alternatives = _listed(text, asks, reading) if kind is Kind.SEVERAL_PAPERS else ("", (), ())
    if kind is Kind.SEVERAL_PAPERS and not topic:  # no reader, or it found no topic words
        topic, area = _topic(text[asks.end() :]) if asks else ("", "")
        if area:
            filters = {**filters, "area": (area.lower(),)}
    query = _standalone_query(text, history, refers)
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
        about=_referent(history)
        if history and (points or (like and _THIS_ONE.match(like.group("title"))))
        else None,
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


def _referent(history: Sequence[Turn]) -> Paper | None:
    """The one paper the last answer cited. None when it cited none (a refusal: its best source is
    a guess) or several (then "they" could be any of them)."""
    last = history[-1].answer
    cited = {c.paper_id for c in last.citations}
    if len(cited) != 1:
        return None
    return next((r.paper for r in last.retrieved if r.paper.id in cited), None)


def _standalone_query(question: str, history: Sequence[Turn], refers_back: bool) -> str:
    """A follow-up made searchable on its own: when it refers back ("what datasets did it use?"),
    it names the paper the last answer was about."""
    if not history or not refers_back:
        return question
    last = history[-1].answer
    cited = [c.title for c in last.citations] or [r.paper.display_title for r in last.retrieved[:1]]
    if not cited:
        return f"{question} (context: {history[-1].question})"
    return f"{question} (about: {cited[0]})"
