"""Typed results passed between the pipeline stages."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Paper:
    """One abstract with what we know about it. `sources` lists every `file#index` it came from."""

    id: str
    abstract: str
    title: str = ""
    url: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str = ""
    status: str = ""  # oral, spotlight, poster, ... when the source says so
    sources: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def display_title(self) -> str:
        return self.title or (self.abstract[:80].rsplit(" ", 1)[0] + "…")

    @property
    def text(self) -> str:
        """Title and abstract: what the paper says, names included (a title may be the only place
        that names the method: "SCOPE: A Self-supervised Framework ...")."""
        return f"{self.title}. {self.abstract}" if self.title else self.abstract


@dataclass
class Chunk:
    """A window of one abstract that fits the embedder, with character offsets into the abstract."""

    paper_id: str
    position: int
    text: str
    start: int
    end: int

    @property
    def id(self) -> str:
        return f"{self.paper_id}::{self.position}"


@dataclass
class Passage:
    """A retrieved chunk with its paper and scores (fused score, and the dense cosine if any)."""

    chunk: Chunk
    paper: Paper
    score: float
    dense_similarity: float | None = None


@dataclass
class SearchResult:
    """One paper in a ranked search result, its best passage first."""

    rank: int
    paper: Paper
    score: float
    passages: list[Passage]

    @property
    def best(self) -> Passage:
        return self.passages[0]

    @property
    def relevance(self) -> float:
        """Best dense cosine similarity of any of its passages (0 when only keywords matched)."""
        sims = [p.dense_similarity for p in self.passages if p.dense_similarity is not None]
        return max(sims, default=0.0)

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "paper_id": self.paper.id,
            "title": self.paper.title,
            "url": self.paper.url,
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 4),
            "chunk_text": self.best.chunk.text,
            "sources": self.paper.sources,
        }


@dataclass
class Citation:
    """A numbered source the answer cites, with the exact passage that supports it."""

    number: int
    paper_id: str
    title: str
    url: str
    sources: list[str]
    passage: str
    start: int
    end: int
    score: float


@dataclass
class Check:
    """One named check of a claim against a source; `detail` says why it failed."""

    name: str
    passed: bool
    detail: str = ""
    sure: bool = True  # False: a judge that passed the claim without confidence (the verdict asks)


@dataclass
class AnswerSentence:
    """One sentence of the answer, the source numbers backing it, whether it passed its checks,
    and the checks themselves. A sentence with no claim ("Yes.") is kept but backs nothing."""

    text: str
    citations: list[int]
    supported: bool
    score: float
    attributed: bool = False  # the checker attached the citation, the model gave none
    checks: list[Check] = field(default_factory=list)
    claim: bool = True

    @property
    def why_not(self) -> str:
        """The failed checks, as the user reads them ("" when none failed)."""
        return "; ".join(c.detail for c in self.checks if not c.passed)

    @property
    def doubted(self) -> str:
        """Shown, but the model's verdict found it not stated by its source, or contradicted by it:
        why ("" otherwise)."""
        return "; ".join(c.detail for c in self.checks if c.name == "verdict" and not c.passed)


@dataclass
class Step:
    """One decision of an answer stage, for the answer's trace: which stage, about which sentence
    (empty for the whole answer), what it decided, and why."""

    stage: str
    decision: str
    sentence: str = ""
    reason: str = ""


@dataclass
class Timings:
    retrieval: float = 0.0
    first_token: float | None = None
    total: float = 0.0
    verdict: float | None = None  # seconds of the model's verdict on the answer (the `verdict` stage)


@dataclass
class Answer:
    question: str
    text: str
    citations: list[Citation]
    sentences: list[AnswerSentence]
    abstained: bool
    retrieved: list[SearchResult]
    timings: Timings
    backend: str = ""
    model: str = ""
    query: str = ""  # the standalone query actually searched (after follow-up rewriting)
    invented_citations: int = 0
    abstain_reason: str = ""  # the human sentence
    abstain_code: str = ""  # the rule that refused (rag.answer.trust.RULES)
    removed: list[AnswerSentence] = field(default_factory=list)  # sentences that failed their checks
    draft: str = ""  # what the model wrote, before checking
    # paper title -> the model said the paper answers the which-paper question (paper_fit)
    paper_confirmed: dict[str, bool] = field(default_factory=dict)
    entailed: dict[str, str] = field(default_factory=dict)  # entail_key -> the model's Stance ("" none)
    evidence: list[Any] = field(default_factory=list, repr=False)  # rag.search.evidence.Evidence; not in JSON
    prompt_tokens: int | None = None
    cached_tokens: int | None = None  # of those, how many the LLM reused from its prompt cache
    error: str = ""  # set when the LLM failed; the sources are still returned
    trace: list[Step] = field(default_factory=list)  # what each answer stage did, in order
    selected: dict | None = None  # the `select` stage: its features, candidates and decision
    parts: list[dict] = field(default_factory=list)  # an answer by parts: each part's paper, text, cited
    intent: Any = field(default=None, repr=False)  # rag.question.Intent, the question as parsed
    papers: list[Any] = field(default_factory=list)  # rag.search.survey.SurveyHit: every paper that fits
    near_misses: list[Any] = field(default_factory=list)  # SurveyHit: papers on the words the judge cut
    listing: str = ""  # the sentence before that list (its count and the filters applied)
    themes: list[Any] = field(default_factory=list)  # rag.map.themes.Theme: the list grouped by theme
    topics: list[Any] = field(default_factory=list)  # rag.map.overview.TopicCount: "biggest topics" answers
    similar: list[Any] = field(
        default_factory=list
    )  # rag.search.similar.Similar: "papers like <title>" answers

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "query": self.query,
            "answer": self.text,
            "abstained": self.abstained,
            "abstain_reason": self.abstain_reason,
            "abstain_code": self.abstain_code,
            "citations": [asdict(c) for c in self.citations],
            "sentences": [asdict(s) for s in self.sentences],
            "not_found_in_sources": [asdict(s) for s in self.removed],
            "draft": self.draft,
            "paper_confirmed": self.paper_confirmed,
            "entailed": self.entailed,
            "invented_citations": self.invented_citations,
            "retrieved": [r.to_json() for r in self.retrieved],
            "timings": asdict(self.timings),
            "backend": self.backend,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "error": self.error,
            "intent": self.intent.to_json() if self.intent is not None else None,
            "trace": [asdict(t) for t in self.trace],
            "selected": self.selected,
            "parts": self.parts,
            "listing": self.listing,
            "papers": [h.to_json() for h in self.papers],
            "near_misses": [h.to_json() for h in self.near_misses],
            "themes": [t.to_json() for t in self.themes],
            "topics": [t.to_json() for t in self.topics],
            "similar": [s.to_json() for s in self.similar],
        }


@dataclass
class Turn:
    """A finished exchange of a conversation: the context a follow-up question is parsed against."""

    question: str
    answer: Answer
