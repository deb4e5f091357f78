"""The `Intent`: a question as read once (`rag.question.read`), passed on as a value. Nothing
downstream reads the question's wording again."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag.types import Paper


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
    # The conversation's decision (`conversation.FollowUp`): does it follow up the last answer,
    # how sure (None: decided by a pronoun, or the first question), why in words, and the paper(s)
    # of the last answer it points at (all of a list for "Which of them ...?"; `about` is the one
    # paper whose sources alone answer it).
    follows: bool = False
    follow_p: float | None = None
    follow_why: str = ""
    referents: tuple[Paper, ...] = ()

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
            "follows": self.follows,
            "follow_p": self.follow_p,
            "referents": [p.id for p in self.referents],
        }
