"""retrieve -> select evidence -> generate -> cite and verify -> abstain -> `Answer`.

`Pipeline.stream` yields events so a UI shows the sources at once and the answer as it is
generated; `Pipeline.ask` returns the finished `Answer`.
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from rag.citations import render_text, strip_markers
from rag.complete import complete
from rag.conversation import Turn, referent, standalone_query
from rag.embedding import Embedder, embedder_from_settings
from rag.evidence import Evidence, Sentence, embedded_sentences, select_evidence
from rag.filters import Filters
from rag.llm import LLM, LLMError, llm_from_settings
from rag.prompts import (
    CONFIRM_SYSTEM,
    CONFIRM_USER,
    JUDGE_SYSTEM,
    JUDGE_USER,
    SOURCE_TEMPLATE,
    SYSTEM_PROMPT,
    USER_TEMPLATE,
)
from rag.questions import asks_for_paper, asks_for_papers
from rag.retrieve import HybridRetriever, on_paper, on_subject, rare_names, search
from rag.sentence_vectors import SentenceVectors, sentence_vectors_from_settings
from rag.settings import Settings
from rag.store import Store, store_from_settings
from rag.text import strip_control
from rag.trust import (
    REFUSAL,
    Checked,
    Confirm,
    Refusal,
    Trust,
    check_answer,
    clean_draft,
    trust_from_settings,
)
from rag.types import Answer, Paper, SearchResult, Timings

log = logging.getLogger(__name__)


class InputError(ValueError):
    """The question cannot be asked as it is; the message says why."""


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
class TokenEvent:
    text: str


@dataclass
class AnswerEvent:
    answer: Answer


Event = SourcesEvent | PreviewEvent | TokenEvent | AnswerEvent


def build_messages(question: str, evidence: list[Evidence]) -> list[dict[str, str]]:
    sources = "\n\n".join(
        SOURCE_TEMPLATE.format(
            number=ev.number,
            # Quote the data so a title or abstract cannot close the tag and speak as us.
            title=html.escape(ev.paper.display_title, quote=True),
            text=ev.text.replace("</source>", "</ source>"),
        )
        for ev in evidence
    )
    user = USER_TEMPLATE.format(sources=sources, question=question)
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


class Pipeline:
    """The answering engine. Components default to the settings' ones and can be passed in
    (tests pass fakes); they are built lazily so `--help` and the UI start fast."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
    ):
        self.settings = settings or Settings()
        self._embedder, self._store, self._llm = embedder, store, llm

    @cached_property
    def embedder(self) -> Embedder:
        return self._embedder or embedder_from_settings(self.settings)

    @cached_property
    def store(self) -> Store:
        return self._store or store_from_settings(self.settings, self.embedder)

    @cached_property
    def sentence_vectors(self) -> SentenceVectors:
        """The abstracts' sentence vectors kept beside the index (filled by ingest)."""
        return sentence_vectors_from_settings(self.settings, self.embedder)

    def sentences_of(self, papers: list[Paper]) -> list[list[Sentence]]:
        return embedded_sentences(papers, self.embedder, self.sentence_vectors)

    @cached_property
    def trust(self) -> Trust:
        return trust_from_settings(self.settings)

    @cached_property
    def retriever(self) -> HybridRetriever:
        s = self.settings
        return HybridRetriever(
            self.store, self.embedder, mode=s.fusion, rrf_k=s.rrf_k, name_weight=s.name_weight
        )

    def llm(self, backend: str | None = None, model: str | None = None) -> LLM:
        """The settings' LLM, or another `backend` and `model` (a shipped model name for the
        embedded backend, a model name on the Ollama or OpenAI-compatible server)."""
        if (
            self._llm is not None
            and backend in (None, self._llm.backend)
            and model in (None, self._llm.model)
        ):
            return self._llm
        settings = self.settings
        if model:
            field = {"llamacpp": "model", "ollama": "ollama_model", "openai": "openai_model"}.get(
                backend or ""
            )
            if field is None:
                raise LLMError(f"Choose a backend (llamacpp, ollama, openai) for the model {model!r}.")
            settings = settings.model_copy(update={field: model})
        return llm_from_settings(settings, backend)

    def validate(self, question: str) -> str:
        question = strip_control(question or "").strip()
        if not question:
            raise InputError("Please type a question.")
        limit = self.settings.max_question_chars
        if len(question) > limit:
            raise InputError(f"The question is {len(question):,} characters long; the limit is {limit:,}.")
        return question

    def search(
        self,
        query: str,
        k: int | None = None,
        query_vector: list[float] | None = None,
        filters: Filters | None = None,
    ) -> list[SearchResult]:
        s = self.settings
        self.store.check_fingerprint()
        return search(
            query,
            self.store,
            self.embedder,
            k=k or s.top_k,
            candidate_multiplier=s.candidate_multiplier,
            retriever=self.retriever,
            query_vector=query_vector,
            filters=filters,
            rerank_papers=s.rerank_papers,
            sentences_of=self.sentences_of,
        )

    def stream(
        self,
        question: str,
        *,
        history: Sequence[Turn] = (),
        k: int | None = None,
        backend: str | None = None,
        model: str | None = None,
        temperature: float | None = None,
        trust: Trust | None = None,
        draft_always: bool = False,
        filters: Filters | None = None,
    ) -> Iterator[Event]:
        """Sources, then the draft token by token, then the checked `Answer`. `filters` keep the
        sources within a venue, year or status. `draft_always` (evaluation only) generates even
        when a rule refuses before generation."""
        s = self.settings
        started = time.perf_counter()
        question = self.validate(question)
        query, qvec, results = self.find(question, history, k=k, filters=filters)
        timings = Timings(retrieval=time.perf_counter() - started)
        yield SourcesEvent(query, results)

        def finish(**fields) -> AnswerEvent:
            timings.total = time.perf_counter() - started
            base = dict(
                question=question,
                text="",
                citations=[],
                sentences=[],
                abstained=False,
                retrieved=results,
                timings=timings,
                query=query,
            )
            return AnswerEvent(Answer(**{**base, **fields}))

        trust = trust or self.trust
        gate = trust.screen(question, results)
        if gate and not draft_always:
            yield finish(**_refusal(gate))
            return
        evidence = self.sources(question, qvec, results)
        yield PreviewEvent(evidence)
        messages = build_messages(query if query != question else question, evidence)
        pieces: list[str] = []
        try:
            llm = self.llm(backend, model)
            for piece in llm.stream(
                messages,
                max_tokens=s.max_answer_tokens,
                temperature=s.temperature if temperature is None else temperature,
            ):
                if timings.first_token is None:
                    timings.first_token = time.perf_counter() - started
                pieces.append(piece)
                yield TokenEvent(piece)
        except LLMError as exc:
            log.warning("LLM failed: %s", exc)
            yield finish(text="".join(pieces), error=str(exc))
            return
        draft = "".join(pieces)
        cached = getattr(llm, "reused_tokens", None)  # read before the judge call replaces it
        confirmed: dict[str, bool] = {}

        def confirm(ev: Evidence, asked: str) -> bool | None:
            verdict = self.confirm_paper(llm, asked, ev)
            if verdict is not None:
                confirmed[ev.paper.display_title] = verdict
            return verdict

        fields = judge(question, draft, evidence, self.embedder, trust, gate=gate,
                       ask=lambda checked: self.ask_judge(llm, checked.text, question),
                       complete_parts=s.complete_answers, confirm=confirm)  # fmt: skip
        if fields.get("abstained"):
            log.info("refused (%s): %s", fields["abstain_code"], draft)
        yield finish(**fields, draft=draft, evidence=evidence, backend=llm.backend, model=llm.model,
                     prompt_tokens=count_prompt_tokens(llm, messages), cached_tokens=cached,
                     paper_confirmed=confirmed)  # fmt: skip

    def find(self, question: str, history: Sequence[Turn] = (), *, k: int | None = None,
             filters: Filters | None = None) -> tuple[str, list[float], list[SearchResult]]:  # fmt: skip
        """The papers an answer reads: the standalone query, its vector and the search results,
        narrowed to the question's named subject and, for a follow-up, to the paper it is about."""
        s = self.settings
        query = standalone_query(question, history)
        qvec = self.embedder.embed(query)
        results = self.search(query, k or s.answer_k, query_vector=qvec, filters=filters)
        if s.on_subject:
            results = on_subject(query, results, self.store)
        pinned = referent(question, history) if s.pin_follow_ups else None
        if pinned:
            results = on_paper(question, results, pinned, self.store)
        return query, qvec, results

    def sources(self, question: str, query_vector, results: list[SearchResult]) -> list[Evidence]:
        """The sources offered to the model for `results`: their best sentences within the
        settings' token budget (`evidence.select_evidence`). A question about one paper gets the
        one-paper budget and, when set, only papers that score near the first one as a whole or
        that hold a rare name of the question the first one lacks."""
        s = self.settings
        several = asks_for_papers(question)
        budget = s.context_tokens if several else min(s.context_tokens, s.one_paper_context_tokens)
        within = 0.0 if several else s.one_paper_within
        named = rare_names(question, self.store) if within else []
        return select_evidence(question, query_vector, results, self.embedder, budget_tokens=budget,
                               keep_within=s.source_within, paper_within=within, named=named,
                               vectors=self.sentence_vectors, duplicate_cosine=s.duplicate_source_cosine,
                               duplicates=s.duplicate_sources)  # fmt: skip

    def ask_judge(self, llm: LLM, answer: str, question: str) -> bool | None:
        """Ask the model whether `answer` gives what `question` asks for."""
        user = JUDGE_USER.format(question=question, answer=strip_markers(answer))
        return _yes_no(llm, JUDGE_SYSTEM, user, "judge")

    def confirm_paper(self, llm: LLM, question: str, ev: Evidence) -> bool | None:
        """Ask the model whether the paper of the source `ev` is the answer to `question`."""
        user = CONFIRM_USER.format(title=ev.paper.display_title, text=ev.text, question=question)
        return _yes_no(llm, CONFIRM_SYSTEM, user, "confirmation")

    def ask(self, question: str, **kwargs) -> Answer:
        for event in self.stream(question, **kwargs):
            if isinstance(event, AnswerEvent):
                return event.answer
        raise RuntimeError("the pipeline ended without an answer")  # pragma: no cover


def _yes_no(llm: LLM, system: str, user: str, what: str) -> bool | None:
    """The model's one-word verdict in a short prompt of its own: True/False, or None when the
    reply is neither or the model failed."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    try:
        reply = llm.complete(messages, max_tokens=3, temperature=0.0).strip().lower()
    except LLMError as exc:
        log.warning("%s failed: %s", what, exc)
        return None
    return True if reply.startswith("yes") else False if reply.startswith("no") else None


def _refusal(refusal: Refusal) -> dict:
    return dict(text=REFUSAL, abstained=True, abstain_code=refusal.code, abstain_reason=refusal.reason)


def judge(
    question: str,
    draft: str,
    evidence: list[Evidence],
    embedder: Embedder,
    trust: Trust,
    *,
    gate: Refusal | None = None,
    ask: Callable[[Checked], bool | None] | None = None,
    complete_parts: bool = True,
    confirm: Confirm | None = None,
) -> dict:
    """The Answer fields for a finished draft under `trust`: checked sentences, or a refusal.
    `gate` is the refusal a rule made before generation (the eval drafts anyway, so one stored
    draft can be judged under every rule set). The model's grade, when the rules asked for it, is
    returned as `judged`. `confirm` asks the model whether a source is the paper a which-paper
    question describes (see rag.trust.answers)."""
    if gate:
        return _refusal(gate)
    titles = [t for ev in evidence for t in (ev.paper.title, ev.paper.display_title) if t]
    numbered = {ev.number: ev.paper.title for ev in evidence if ev.paper.title}
    cleaned = clean_draft(draft, titles, paper_markers=numbered if asks_for_paper(question) else None)
    checked = check_answer(cleaned, evidence, embedder, trust, question, confirm)
    grades: list[bool | None] = []

    def graded(c: Checked) -> bool | None:
        grades.append(ask(c) if ask else None)
        return grades[-1]

    refusal = trust.after_generation(draft, checked, question, graded)
    judged = grades[0] if grades else None
    if refusal:
        return dict(removed=checked.removed, judged=judged) | _refusal(refusal)
    sentences, citations, text = checked.sentences, checked.citations, checked.text
    if complete_parts:
        sentences, citations = complete(question, sentences, citations, evidence, embedder)
        text = render_text(sentences, citations)
    return dict(
        judged=judged,
        text=text,
        citations=citations,
        sentences=sentences,
        removed=checked.removed,
        invented_citations=checked.invented,
    )


def count_prompt_tokens(llm: LLM, messages: list[dict[str, str]]) -> int | None:
    try:
        return sum(llm.count_tokens(m["content"]) for m in messages)
    except Exception:  # counting is informative only
        return None
