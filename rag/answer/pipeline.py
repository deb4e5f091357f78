"""retrieve -> select evidence -> generate -> cite and verify -> abstain -> `Answer`.

`Pipeline.stream` yields events so a UI shows the sources at once and the answer as it is
generated; `Pipeline.ask` returns the finished `Answer`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from functools import cached_property

from rag import question as qs
from rag import text as tx
from rag.answer import audit as au
from rag.answer.events import (
    AnswerEvent,
    CheckingEvent,
    Event,
    PreviewEvent,
    SourcesEvent,
    SurveyEvent,
    TokenEvent,
)
from rag.answer.generate import write
from rag.answer.listing import listing_sentence, unknown_filters
from rag.answer.parts import Part, stream_by_parts
from rag.answer.parts import plan as plan_parts
from rag.answer.prompts import build_messages, count_prompt_tokens, prompts_for
from rag.answer.select import signals as sg
from rag.answer.select.selector import shipped_selector
from rag.answer.select.stage import Selection
from rag.answer.stages import judge
from rag.answer.trust import Stance, Trust, trust_from_settings
from rag.answer.verdicts import confirm_paper, entail_key, stance
from rag.filters import Filters, combine
from rag.index.embedding import Embedder, embedder_from_settings
from rag.index.sentence_vectors import SentenceVectors, sentence_vectors_from_settings
from rag.index.store import Store, store_from_settings
from rag.judge.answer import answer_judge
from rag.llm import LLM, LLMError, Message, llm_from_settings
from rag.map.build import KeptMap, ensure_map, map_folder, vectors_of
from rag.map.overview import biggest_topics, topics_text
from rag.map.themes import Theme, group_by_theme, spread
from rag.question import Intent
from rag.question.conversation import step as conversation_step
from rag.question.rewrite import reread, unsure
from rag.search.evidence import Evidence, Sentence, embedded_sentences, select_evidence
from rag.search.retrieve import HybridRetriever, each_subject, on_paper, on_subject, rare_names, search
from rag.search.similar import named_paper, similar, similar_text
from rag.search.survey import Survey, SurveyHit, SurveyList, survey_from
from rag.settings import Settings
from rag.text import content_words, strip_control
from rag.types import Answer, Paper, SearchResult, Step, Timings, Turn

__all__ = ["AnswerEvent", "Event", "InputError", "Pipeline", "PreviewEvent", "SourcesEvent", "SurveyEvent",
           "TokenEvent", "Turn"]  # fmt: skip
log = logging.getLogger(__name__)
NAMED_DEPTH = 20  # papers searched for the one a "papers like <title>" question names
LISTED_DEPTH = 10
MAX_QUESTION_CHARS = 2000  # a longer "question" is a pasted document: refused with the limit said


class InputError(ValueError):
    """The question cannot be asked as it is; the message says why."""


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
        self.trust = trust_from_settings(self.settings)  # a misnamed check or rule stops here, at start-up

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
    def retriever(self) -> HybridRetriever:
        s = self.settings
        return HybridRetriever(self.store, self.embedder, mode=s.fusion)

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
        limit = MAX_QUESTION_CHARS
        if len(question) > limit:
            raise InputError(f"The question is {len(question):,} characters long; the limit is {limit:,}.")
        return question

    def search(
        self,
        query: str,
        k: int | None = None,
        query_vector: list[float] | None = None,
        filters: Filters | None = None,
        alternatives: Sequence[str] = (),
    ) -> list[SearchResult]:
        s = self.settings
        self.store.check_fingerprint()
        return search(
            query,
            self.store,
            self.embedder,
            k=k or s.top_k,
            retriever=self.retriever,
            query_vector=query_vector,
            filters=filters,
            rerank_papers=s.rerank_papers,
            sentences_of=self.sentences_of,
            alternatives=alternatives,
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
        filters: Filters | None = None,
    ) -> Iterator[Event]:
        """Sources, then the draft token by token, then the checked `Answer`. `filters` keep the
        sources within a venue, year or status."""
        s = self.settings
        started = time.perf_counter()
        question = self.validate(question)
        intent = self.parse(question, history)
        within = self.store.resolve(combine(filters, intent.filters))  # the question's own ones too
        if intent.kind is qs.Kind.TOPICS:
            yield from self._topics(intent, within, started)
            return
        if intent.kind is qs.Kind.SIMILAR:
            yield from self._similar(intent, started)
            return
        # (the survey resolves the panel's filters and the question's once: `within` is resolved)
        listed = self.survey.listing(intent, filters) if intent.asks_for_papers else SurveyList([], [], [])
        read: list[Step] = [conversation_step(intent)] if history else []
        if self.unsure(intent):
            if listed.hits:  # the reader's list shows while the model reads the question again
                yield SurveyEvent(listing_sentence(intent, listed.hits, within), listed.hits, [])
            intent, step = self.reread(intent, backend, model, history)
            read.append(step)
            if step.decision == "rewritten":
                within = self.store.resolve(combine(filters, intent.filters))
                listed = self.survey.listing(intent, filters)
        hits = listed.hits
        themes = self.themes(hits, intent.topic)
        qvec, results = self.find(
            intent,
            k=k,
            filters=within,
            # a list's papers, or those of the last list a follow-up asks about ("which of them")
            listed={h.paper.id for h in hits}
            or ({p.id for p in intent.referents} if len(intent.referents) > 1 else set()),
            themes=themes,
        )
        query = intent.query
        timings = Timings(retrieval=time.perf_counter() - started)
        yield SourcesEvent(query, results)
        listing = (
            listing_sentence(
                intent,
                hits,
                within,
                cut=len(listed.cut),
                relaxed=listed.relaxed,
                unknown=unknown_filters(intent.filters, self.store),
            )  # fmt: skip
            if intent.topic and intent.asks_for_papers
            else ""
        )
        if listing:
            yield SurveyEvent(listing, hits, themes)

        def finish(**fields) -> AnswerEvent:
            timings.total = time.perf_counter() - started
            if hits and fields.get("abstained"):  # the list answers; no synthesis was backed
                fields |= {"abstained": False, "text": ""}
            if read:  # the reading the list was built from comes first in the trace
                fields["trace"] = read + list(fields.get("trace", []))
            base = dict(papers=hits, near_misses=listed.cut, themes=themes, listing=listing, question=question, intent=intent, text="", citations=[],
                        sentences=[], abstained=False, retrieved=results, timings=timings, query=query)  # fmt: skip
            return AnswerEvent(Answer(**{**base, **fields}))

        trust = trust or self.trust
        evidence = self.sources(intent, qvec, results)
        parts = self.parts(intent, results, evidence, within)
        if parts:
            clock = (timings, started, finish)
            yield from stream_by_parts(
                self, intent, parts, results, trust, clock, backend, model, temperature
            )
            return
        # The rules before generation are the selector's signals: none refuses on its own.
        selection = self.selection(intent, results, evidence, trust)
        yield PreviewEvent(evidence)
        prompts = prompts_for(intent, evidence)
        try:
            llm = self.llm(backend, model)
            draft = yield from write(llm, prompts, timings, started, max_tokens=s.max_answer_tokens,
                                     temperature=s.temperature if temperature is None else temperature)  # fmt: skip
        except LLMError as exc:
            log.warning("LLM failed: %s", exc)
            yield finish(text=getattr(exc, "partial", ""), error=str(exc))
            return
        cached = getattr(llm, "reused_tokens", None)  # read before the judge call replaces it
        yield CheckingEvent(len(tx.sentences(draft)))
        # The verdict reads the answer's prompt, which llama.cpp has cached; answers written in
        # parts had one prompt each, and are judged after a prompt of their own.
        said = prompts[0][0] if len(prompts) == 1 else build_messages(intent.query, evidence)
        fields = self.judge_draft(intent, draft, evidence, llm, trust, (said, timings), selection)
        tokens = [count_prompt_tokens(llm, m) for m, _ in prompts]
        yield finish(**fields, draft=draft, evidence=evidence, backend=llm.backend, model=llm.model,
                     prompt_tokens=None if None in tokens else sum(tokens), cached_tokens=cached)  # fmt: skip

    def judge_draft(
        self,
        intent: Intent,
        draft: str,
        evidence: list[Evidence],
        llm: LLM,
        trust: Trust,
        conversation: tuple[list[Message], Timings] | None = None,
        selection: Selection | None = None,
    ) -> dict:
        """The draft through the answer stages, with the model as the confirmer and the verdict;
        the papers it confirmed are kept so the eval can judge the same draft again."""
        confirmed, entailed = {}, {}  # paper title -> confirmed; entail_key -> the Stance's value

        def confirm(ev: Evidence, asked: str) -> bool | None:
            verdict = self.confirm_paper(llm, asked, ev)
            if verdict is not None:
                confirmed[ev.paper.display_title] = verdict
            return verdict

        def entail(claim: str, passage: str, ev: Evidence) -> Stance | None:
            key = entail_key(claim, ev)
            if key not in entailed:
                said = stance(llm, claim, ev.paper.display_title, passage)
                entailed[key] = said.value if said else ""
            return Stance(entailed[key]) if entailed[key] else None

        def verdicts(statements: Sequence[au.Statement]) -> list[Stance | None]:
            assert conversation is not None
            messages, timings = conversation
            started = time.perf_counter()
            said = au.ask(llm, messages, statements)
            timings.verdict = time.perf_counter() - started
            return said

        fields = judge(intent, draft, evidence, self.embedder, trust, confirm=confirm, stages=self.settings.answer_stages, entail=entail,
                       audit=verdicts if conversation else None,
                       answering=self.answering(intent.query), selection=selection)  # fmt: skip
        if fields.get("abstained"):
            log.info("refused (%s): %s", fields["abstain_code"], draft)
        return fields | {"paper_confirmed": confirmed, "entailed": entailed}

    def parts(
        self, intent: Intent, results: list[SearchResult], evidence: list[Evidence], within: Filters
    ) -> list[Part]:
        """The parts the answer is written in (rag/answer/parts/), or [] for one prompt."""
        if not self.settings.parts.enabled:
            return []
        search_one = lambda asked: self.search(asked, 5, filters=within)  # noqa: E731
        return plan_parts(intent, results, evidence, search_one, self.settings.parts.kinds)

    def selection(
        self, intent: Intent, results: list[SearchResult], evidence: list[Evidence], trust: Trust
    ) -> Selection:
        """The selector bound to this answer with what it reads before generation."""
        s = self.settings.select
        selector = shipped_selector()
        if selector is not None and s.threshold is not None:
            selector = replace(selector, threshold=s.threshold)
        before = sg.question_features(intent) | sg.screen_features(
            trust, trust.screen_view(intent, results, evidence)
        )
        return Selection(selector, before, cascade=s.cascade)

    def unsure(self, intent: Intent) -> bool:
        """Is this a question the reader was unsure of, for the model to read again?"""
        s = self.settings.survey
        return s.rewrite and unsure(intent, s.rewrite_below, s.rewrite_kind_above)

    def reread(self, intent: Intent, backend: str | None = None, model: str | None = None,
               history: Sequence[Turn] = ()) -> tuple[Intent, Step]:  # fmt: skip
        """The question read again by the model, and the trace step saying which reading the
        answer is built from (`rag.question.rewrite.reread`)."""
        return reread(intent, lambda: self.llm(backend, model), history)

    def parse(self, question: str, history: Sequence[Turn] = ()) -> Intent:
        """The question's `Intent`, read by the trained question reader when `survey.reader` is on,
        and against the conversation by the follow-up decision (`conversation.follow_up`)."""
        return qs.read(question, history, reader=self.reader, follow=self.follow if history else None)

    @cached_property
    def follow(self) -> qs.FollowUp | None:
        """The conversation's follow-up decision (None: a pronoun decides)."""
        c = self.settings.conversation
        if c.follow_up != "learned":
            return None
        from rag.question.conversation import Meaning

        return qs.FollowUp.shipped(c.threshold, Meaning(self.embedder, self.store))

    @cached_property
    def reader(self):
        if not self.settings.survey.reader:
            return None
        from rag.question.reader import question_reader

        return question_reader()

    @cached_property
    def survey(self) -> Survey:
        return survey_from(self.settings.survey, self.store, self.embedder, self.sentence_vectors)

    def _topics(self, intent: Intent, within: Filters, started: float) -> Iterator[Event]:
        """The answer to "What are the biggest topics ...?": counted on the map, no model."""
        conference_map = self.kept_map.get() or ensure_map(map_folder(self.settings, self.store), self.store)
        counts = biggest_topics(conference_map, self.store.paper_ids(within) if within else None)
        text = topics_text(counts, within, len(conference_map.topics))
        elapsed = time.perf_counter() - started
        step = Step("topics", "counted on the map", "", f"{len(counts)} topics hold the papers asked about")
        yield AnswerEvent(Answer(question=intent.question, text=text, citations=[], sentences=[], abstained=False,
                                 retrieved=[], timings=Timings(retrieval=elapsed, total=elapsed), query=intent.query,
                                 intent=intent, topics=counts, trace=[step]))  # fmt: skip

    def _similar(self, intent: Intent, started: float) -> Iterator[Event]:
        """The answer to "Papers like <title>": the paper named (or the one the last answer cited,
        for "papers like this one"), then the papers nearest it; no model."""
        results = [] if intent.about else self.search(intent.like, NAMED_DEPTH)
        paper = intent.about or named_paper(intent.like, results, self._rarity)
        found: list = []
        if paper is None:
            text = f"No indexed paper is titled like “{intent.like}”; the closest titles are below."
        else:
            paper, found = similar(self.store, self.embedder, self.sentence_vectors, paper.id)
            text = similar_text(paper, found)
        elapsed = time.perf_counter() - started
        step = Step("similar", "nearest papers" if paper else "no paper named", paper.display_title if paper else "",
                    "papers ordered by the cosine of their mean sentence vectors")  # fmt: skip
        yield AnswerEvent(Answer(question=intent.question, text=text, citations=[], sentences=[], abstained=paper is None,
                                 retrieved=results if paper is None else [], query=intent.like,
                                 timings=Timings(retrieval=elapsed, total=elapsed),
                                 intent=intent, similar=found, trace=[step]))  # fmt: skip

    def _rarity(self, terms: list[str]) -> dict[str, float]:
        """Each term's inverse document frequency in the keyword index (rarer says more)."""
        index = self.store.keyword_index()
        df = index.frequencies(terms)
        return {t: math.log((index.size + 1) / (df[t] + 1)) for t in terms}

    @cached_property
    def kept_map(self) -> KeptMap:
        return KeptMap(map_folder(self.settings, self.store))

    def themes(self, hits: list[SurveyHit], topic: str = "") -> list[Theme]:
        """A survey list grouped by the map's themes ([] without a kept map or a short list)."""
        if not hits:
            return []
        return group_by_theme(hits, self.kept_map.get(), lambda ids: vectors_of(self.store, ids), topic)

    def find(
        self,
        intent: Intent,
        *,
        k: int | None = None,
        filters: Filters | None = None,
        listed: Collection[str] = (),
        themes: Sequence[Theme] = (),
    ) -> tuple[list[float], list[SearchResult]]:
        """The papers an answer reads within `filters` (all of them, the question's included, in
        the index's values: `Store.resolve`): the query's vector and the search results, narrowed
        to the question's named subject and, for a follow-up, to the paper it is about; asked for
        every paper on something, the papers of the survey list (`listed`) first."""
        s = self.settings
        qvec = self.embedder.embed(intent.query)
        wanted = k or s.answer_k
        if intent.subjects:
            return qvec, each_subject([self.search(p, wanted, filters=filters) for p in intent.parts], wanted)
        # A survey's sources are papers of its list: search deeper, keep those first (its phrases
        # miss what a paper says in other words, so the others stay behind them).
        depth = wanted * LISTED_DEPTH if listed else wanted
        results = self.search(
            intent.query, depth, query_vector=qvec, filters=filters, alternatives=intent.alternatives
        )
        if listed:
            results.sort(key=lambda r: r.paper.id not in listed)
            if themes and "survey_themes" in s.source_rules:
                results = spread(results, themes)
            results = [replace(r, rank=i) for i, r in enumerate(results, 1)][:wanted]
        if "on_subject" in s.source_rules:
            results = on_subject(intent, results, self.store)
        if "pin_follow_ups" in s.source_rules and intent.about:
            results = on_paper(intent, results, intent.about, self.store)
        return qvec, results

    def sources(self, intent: Intent, query_vector, results: list[SearchResult]) -> list[Evidence]:
        """The sources offered to the model for `results`: their best sentences within the
        settings' token budget (`evidence.select_evidence`). A question about one paper gets the
        one-paper budget and, when set, only papers that score near the first one as a whole or
        that hold a rare name of the question the first one lacks."""
        s = self.settings
        if intent.subjects and len(results) >= len(intent.parts):
            # One source per part: each part's best paper, read for that part.
            return [
                replace(ev[0], number=n)
                for n, (part, result) in enumerate(zip(intent.parts, results), 1)
                if (
                    ev := select_evidence(
                        content_words(part),
                        self.embedder.embed(part),
                        [result],
                        self.embedder,
                        budget_tokens=s.context_tokens // len(intent.parts),
                        vectors=self.sentence_vectors,
                        answering=self.answering(part),
                        floor=s.evidence_floor,
                    )
                )  # fmt: skip
            ]
        within = 0.0 if intent.asks_for_papers else s.one_paper_within
        named = rare_names(intent.names, self.store) if within else []
        return select_evidence(intent.words, query_vector, results, self.embedder,
                               budget_tokens=s.context_tokens, keep_within=s.source_within,
                               paper_within=within, named=named, vectors=self.sentence_vectors,
                               answering=self.answering(intent.query), floor=s.evidence_floor)  # fmt: skip

    def answering(self, question: str):
        """The answer judge for `question` ((title, sentence) pairs in, p(answers) out), when the
        settings have it order the evidence; else None (`fit` orders it)."""
        if not self.settings.evidence_judge:
            return None
        judge = answer_judge()
        return lambda texts: judge.scores(question, texts)

    def confirm_paper(self, llm: LLM, question: str, ev: Evidence) -> bool | None:
        """Ask the model whether the paper of the source `ev` is the answer to `question`."""
        return confirm_paper(llm, question, ev)

    def ask(self, question: str, **kwargs) -> Answer:
        for event in self.stream(question, **kwargs):
            if isinstance(event, AnswerEvent):
                return event.answer
        raise RuntimeError("the pipeline ended without an answer")  # pragma: no cover
