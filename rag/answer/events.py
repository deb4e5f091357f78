"""What `Pipeline.stream` yields, in order: the sources, the survey list (asked for every paper on
something), the evidence preview, the draft's tokens, the start of its checking, and the checked
answer."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.map.themes import Theme
from rag.search.evidence import Evidence
from rag.search.survey import SurveyHit
from rag.types import Answer, SearchResult


@dataclass
class SourcesEvent:
    query: str
    results: list[SearchResult]


@dataclass
class PreviewEvent:
    """The evidence chosen for the prompt, before the model writes: each source's best sentence
    is something the user can read at once."""

    evidence: list[Evidence]

    def best(self) -> list[tuple[Evidence, str]]:
        """(source, its best-matching sentence) in source order."""
        return [(ev, max(ev.sentences, key=lambda s: s.score).text) for ev in self.evidence if ev.sentences]


@dataclass
class SurveyEvent:
    """Every indexed paper that fits the question, shown before the model writes."""

    sentence: str
    hits: list[SurveyHit]
    themes: list[Theme] = field(default_factory=list)  # the list grouped by the map's themes


@dataclass
class TokenEvent:
    text: str


@dataclass
class CheckingEvent:
    """The draft is written; its sentences are being checked against their sources (the checks,
    the model's verdict where it can change the decision, the selector)."""

    sentences: int  # how many sentences the draft has


@dataclass
class AnswerEvent:
    answer: Answer


Event = SourcesEvent | SurveyEvent | PreviewEvent | TokenEvent | CheckingEvent | AnswerEvent
