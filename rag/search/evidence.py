"""Pick the sentences of the retrieved papers that best answer the question, within a token
budget. Prompt tokens cost ~30 ms each on 2 cores, but cutting the sentence holding the answer
costs the answer: choose by relevance (embedding + word overlap), never by position."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.index.embedding import Embedder
from rag.index.sentence_vectors import SentenceVectors
from rag.text import estimate_tokens, name_in, overlap, sentence_spans, states_contribution
from rag.types import Paper, SearchResult

# Sentences in an abstract that address the model rather than state research ("Ignore previous
# instructions", "You are now ...", "reply only with ..."). They are never sent as evidence: even
# quoted, a small model may obey them.
INSTRUCTION_PATTERNS = (
    r"\b(ignore|disregard|forget|override)\b[^.]{0,40}\b(instructions?|prompts?|rules|guidelines)\b",
    r"\byou are now\b",
    r"\b(reply|respond|answer|output)\s+only\b",
    r"\bsay only\b|\bsay the word\b",
    r"\b(system|developer) (prompt|message)\b",
)
_INSTRUCTION = re.compile("|".join(INSTRUCTION_PATTERNS), re.I)


@dataclass
class Sentence:
    start: int
    end: int
    text: str
    vector: np.ndarray
    score: float = 0.0  # `fit` to the question: which papers become sources
    answers: float | None = None  # the answer judge's p(this sentence answers the question)

    @property
    def rank(self) -> float:
        """What orders a source's sentences for the prompt: the answer judge fused with `fit`
        when the judge scored the sentence, else `fit`."""
        return self.score if self.answers is None else self.answers + FUSE * self.score


@dataclass
class Evidence:
    """One numbered source in the prompt: a paper and the sentences chosen from it."""

    number: int
    paper: Paper
    sentences: list[Sentence]  # all sentences of the abstract, with vectors
    chosen: list[int] = field(default_factory=list)  # indexes into `sentences`, in order

    @property
    def shown(self) -> list[Sentence]:
        """The sentences the prompt shows (all of them when none was chosen)."""
        return [self.sentences[i] for i in self.chosen] if self.chosen else self.sentences

    @property
    def short_title(self) -> str:
        """The paper's title, quoted and cut at 60 characters: how a reason names its source."""
        title = self.paper.display_title
        return f"“{title[:60]}{'…' if len(title) > 60 else ''}”"

    @property
    def text(self) -> str:
        parts, last = [], None
        for i in self.chosen:
            if last is not None and i != last + 1:
                parts.append("…")
            parts.append(self.sentences[i].text)
            last = i
        return " ".join(parts)


def select_evidence(
    asked: Collection[str],
    query_vector: list[float],
    results: list[SearchResult],
    embedder: Embedder,
    *,
    budget_tokens: int,
    keep_within: float = 0.35,
    paper_within: float = 0.0,
    vectors: SentenceVectors | None = None,
    named: Sequence[str] = (),
    answering: Callable[[Sequence[tuple[str, str]]], np.ndarray] | None = None,
    floor: float = 0.0,
) -> list[Evidence]:
    """Sentences of the top papers, best first, until the budget is spent; `asked` are the
    question's content words. Every paper used
    gets at least its best sentence; papers far less relevant than the best are dropped: by their
    best sentence (`keep_within`) and, with `paper_within` (0: off), by their paper score
    (`paper_score`) against the first paper's; a paper holding one of the question's `named`
    methods or datasets that the first paper lacks is kept by both. `answering` (the answer judge
    for this question: (title, sentence) pairs in, p(answers) out) orders the sentences the budget
    takes; which papers are sources stays `fit`'s decision. With the judge, a sentence beyond each
    source's best is added only when its p(answers) reaches `floor` (0: the budget alone decides),
    so a question the judge finds answered in one sentence gets a short prompt."""
    if isinstance(asked, str):
        raise TypeError("select_evidence takes the question's content words, not the question")
    qv = np.asarray(query_vector, dtype=np.float32)
    qwords = set(asked)
    sources: list[Evidence] = []
    for result, embedded in zip(results, embedded_sentences([r.paper for r in results], embedder, vectors)):
        # Sentences addressed to the model are not evidence.
        sentences = [s for s in embedded if not _INSTRUCTION.search(s.text)]
        for s in sentences:
            s.score = fit(qv, qwords, s)
        sources.append(Evidence(0, result.paper, sentences))
    sources = [ev for ev in sources if ev.sentences]
    if not sources:
        return []
    # "What does X use, and how fast is Y?" asks about two papers: the one naming Y stays.
    elsewhere = [n for n in named if not name_in(n, sources[0].paper.text)]

    def named_here(ev: Evidence) -> bool:
        return any(name_in(n, ev.paper.text) for n in elsewhere)

    best = max(max(s.score for s in ev.sentences) for ev in sources)
    kept = [
        ev for ev in sources if max(s.score for s in ev.sentences) >= best - keep_within or named_here(ev)
    ]
    if paper_within:
        # Measured from the paper search ranked first, which stays: search also weighs the title
        # and the question's rare names, so a paper scoring higher here is not thereby better.
        scores = [paper_score([s.score for s in ev.sentences]) for ev in kept]
        kept = [
            ev
            for k, ev in enumerate(kept)
            if k == 0 or scores[k] >= scores[0] - paper_within or named_here(ev)
        ]
    if answering is not None:
        judged = [(ev.paper.display_title, s.text) for ev in kept for s in ev.sentences]
        for s, p in zip((s for ev in kept for s in ev.sentences), answering(judged)):
            s.answers = float(p)
    spent = 0
    ranked: list[tuple[float, int, int]] = []
    for k, ev in enumerate(kept):
        order = sorted(range(len(ev.sentences)), key=lambda j: -ev.sentences[j].rank)
        ev.chosen.append(order[0])
        spent += estimate_tokens(ev.sentences[order[0]].text) + 12
        # Later papers pay a small rank penalty so the best paper gets more room.
        ranked += [(ev.sentences[j].rank - 0.04 * k, k, j) for j in order[1:]]
    for _, k, j in sorted(ranked, reverse=True):
        cost = estimate_tokens(kept[k].sentences[j].text)
        answers = kept[k].sentences[j].answers
        if spent + cost > budget_tokens or (answers is not None and answers < floor):
            continue
        kept[k].chosen.append(j)
        spent += cost
    for number, ev in enumerate(kept, 1):
        ev.number = number
        ev.chosen.sort()
    return kept


# The weight of `fit` beside the answer judge's probability when both order sentences: the judge
# decides, `fit` breaks its near-ties. On both dev halves the top sentence held a fact for 57/65 and
# 57/68 one-paper items at 0.1, 55/65 and 54/68 at 0.5, 56/65 and 57/68 by the judge alone
# (`python -m eval.judge.answers --fuse`).
FUSE = 0.1


def fit(vector: np.ndarray, words: set[str], sentence: Sentence) -> float:
    """How well a sentence matches a text (the question, or what it says a paper does), given the
    text's vector and content words: cosine plus a share of its words the sentence contains. Word
    overlap rescues names and numbers the small embedder blurs."""
    return float(sentence.vector @ vector) + 0.35 * overlap(words, sentence.text)


# A paper that answers a question says so in several sentences; one sentence alone can match by
# chance (among thousands of papers on one topic, some sentence of another paper is as close as the
# right one). Among 10,000 generated distractors (seed dev split), the sum of the best 3 sentences
# put more gold papers in the top 5 than the best sentence alone or the fused chunk ranking.
TOP_SENTENCES = 3


def paper_score(scores: list[float]) -> float:
    """How well a paper answers a question, from its sentences' `fit` scores: the sum of the best
    `TOP_SENTENCES`: what search ranks papers by, and what `paper_within` compares."""
    return sum(sorted(scores, reverse=True)[:TOP_SENTENCES])


# A paper is best told by what it contributes ("we propose ..."): a sentence that says so is
# preferred over a slightly closer one ("this paper proposes ... (LOZO)" over "existing ZO
# methods struggle ...").
CONTRIBUTION_BONUS = 0.3


def told(sentence: Sentence) -> float:
    """The bonus of a sentence that states the paper's contribution."""
    return CONTRIBUTION_BONUS * states_contribution(sentence.text)


def best_told(vector: np.ndarray, words: set[str], ev: Evidence) -> Sentence:
    """The sentence of `ev` that tells best what the paper does about a text (vector, words)."""
    return max(ev.sentences, key=lambda s: fit(vector, words, s) + told(s))


def embedded_sentences(
    papers: list[Paper], embedder: Embedder, vectors: SentenceVectors | None = None
) -> list[list[Sentence]]:
    """Every sentence of each abstract with its vector: read from `vectors` (embedded once, at
    ingest) when given, else embedded now in one batch."""
    spans = [sentence_spans(p.abstract) for p in papers]
    if vectors is not None:
        matrices = vectors.vectors(papers, embedder.embed_batch)
        return [
            [Sentence(s, e, p.abstract[s:e], m[i]) for i, (s, e) in enumerate(ss)]
            for p, ss, m in zip(papers, spans, matrices)
        ]
    texts = [p.abstract[s:e] for p, ss in zip(papers, spans) for s, e in ss]
    flat = iter(np.asarray(embedder.embed_batch(texts), dtype=np.float32) if texts else [])
    return [[Sentence(s, e, p.abstract[s:e], next(flat)) for s, e in ss] for p, ss in zip(papers, spans)]


def evidence_for(paper: Paper, embedder: Embedder, number: int = 1) -> Evidence:
    """A whole abstract as one source, every sentence embedded (what a claim is checked against)."""
    sentences = embedded_sentences([paper], embedder)[0]
    return Evidence(number, paper, sentences, list(range(len(sentences))))
