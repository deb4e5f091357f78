"""retrieve -> select evidence -> generate -> cite and verify -> abstain -> `Answer`.

`Pipeline.stream` yields events so a UI shows the sources at once and the answer as it is
generated; `Pipeline.ask` returns the finished `Answer`.
"""

from __future__ import annotations

import html
import logging
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from rag.chunking import sentence_spans
from rag.citations import check_citations, numbers, strip_markers
from rag.embedding import Embedder, embedder_from_settings
from rag.evidence import Evidence, content_words, select_evidence
from rag.llm import LLM, LLMError, llm_from_settings
from rag.prompts import (
    DECLINE_PATTERNS,
    REFUSAL,
    REFUSAL_PATTERNS,
    SOURCE_TEMPLATE,
    SYSTEM_PROMPT,
    USER_TEMPLATE,
)
from rag.retrieve import HybridRetriever, search
from rag.settings import Settings
from rag.store import Store, store_from_settings
from rag.types import Answer, AnswerSentence, SearchResult, Timings

log = logging.getLogger(__name__)

_REFUSAL_RE = re.compile(r"^\W*(" + "|".join(REFUSAL_PATTERNS) + ")", re.I)
_DECLINE_RE = re.compile("|".join(DECLINE_PATTERNS), re.I)
_QUANTITY = re.compile(r"\bhow (?:many|much) ((?:[\w-]+ ){0,1}[\w-]+)", re.I)
_NOT_FOCUS = {"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "in", "of", "for",
              "to", "the", "a", "an", "can", "could", "will", "would", "should", "more", "less"}  # fmt: skip
# Sentences that only point at the sources ("This is stated in the first source [1].") and
# echoed prompt markup add nothing for the reader.
_META = re.compile(
    r"^\W*(this|that|it|these|the (answer|information))\b[^.]{0,40}\b(stated|mentioned|described|found|"
    r"noted|explained|given)\s+(in|by)\b([^.]{0,40}\b(source|text|abstract|paper)s?\b|\W*$)",
    re.I,
)
_MARKUP = re.compile(r"</?source[^>]*>")
_ASKS_FOR_PAPER = re.compile(
    r"\b(which|what|any|a) (papers?|works?|stud(y|ies)|articles?|methods?|approach(es)?)\b|\bis there\b", re.I
)
_ANAPHORA = re.compile(
    r"\b(it|its|they|their|them|this|that|these|those|the paper|the authors|this work|the method|"
    r"the model|the approach|he|she)\b",
    re.I,
)


class InputError(ValueError):
    """The question cannot be asked as it is; the message says why."""


@dataclass
class Turn:
    """A finished exchange, the context for follow-up questions."""

    question: str
    answer: Answer


@dataclass
class SourcesEvent:
    query: str
    results: list[SearchResult]


@dataclass
class TokenEvent:
    text: str


@dataclass
class AnswerEvent:
    answer: Answer


Event = SourcesEvent | TokenEvent | AnswerEvent


def is_refusal(text: str) -> bool:
    """The model declined: a refusal opening, or a "not stated" phrase in its first sentence."""
    text = text.strip()
    if _REFUSAL_RE.search(text):
        return True
    spans = sentence_spans(text)
    first = text[spans[0][0] : spans[0][1]] if spans else text
    return bool(_DECLINE_RE.search(first))


def unstated_focus(question: str, texts: Sequence[str]) -> list[str]:
    """For "how many X" / "how much X" questions: the words of X that no source text contains.
    Asked for the number of GPUs when no abstract mentions GPUs, a small model invents one;
    these questions are refused before generation."""
    m = _QUANTITY.search(question)
    if not m:
        return []
    focus = []
    for word in m.group(1).split():
        if word.lower() in _NOT_FOCUS:
            break
        focus.append(word)
    stated: set[str] = set().union(*(content_words(t) for t in texts))
    return [w for w in focus if content_words(w) and not content_words(w) <= stated]


def clean_draft(text: str) -> str:
    """Drop echoed prompt markup and sentences that only point at the sources."""
    text = _MARKUP.sub("", text)
    kept = [text[a:b] for a, b in sentence_spans(text) if not _META.search(strip_markers(text[a:b]))]
    return " ".join(kept).strip() if kept else text.strip()


def standalone_query(question: str, history: Sequence[Turn]) -> str:
    """Make a follow-up searchable on its own: when it refers back ("what datasets did it
    use?"), name the paper the last answer was about. Costs no LLM call."""
    if not history or not _ANAPHORA.search(question):
        return question
    last = history[-1].answer
    cited = [c.title for c in last.citations] or [r.paper.display_title for r in last.retrieved[:1]]
    if not cited:
        return f"{question} (context: {history[-1].question})"
    return f"{question} (about: {cited[0]})"


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
    def retriever(self) -> HybridRetriever:
        s = self.settings
        return HybridRetriever(self.store, self.embedder, mode=s.fusion, rrf_k=s.rrf_k)

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
        question = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", " ", question or "").strip()
        if not question:
            raise InputError("Please type a question.")
        limit = self.settings.max_question_chars
        if len(question) > limit:
            raise InputError(f"The question is {len(question):,} characters long; the limit is {limit:,}.")
        return question

    def search(
        self, query: str, k: int | None = None, query_vector: list[float] | None = None
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
    ) -> Iterator[Event]:
        s = self.settings
        started = time.perf_counter()
        question = self.validate(question)
        query = standalone_query(question, history)
        qvec = self.embedder.embed(query)
        results = self.search(query, k or s.answer_k, query_vector=qvec)
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

        relevance = max((r.relevance for r in results), default=0.0)
        if relevance < s.min_relevance:
            yield finish(
                text=REFUSAL,
                abstained=True,
                abstain_reason=f"no passage is relevant enough (best {relevance:.2f} < {s.min_relevance:.2f})",
            )
            return
        missing = unstated_focus(question, [r.paper.abstract for r in results])
        if missing:
            yield finish(
                text=REFUSAL,
                abstained=True,
                abstain_reason=f"the sources never mention {' '.join(missing)!r}",
            )
            return
        evidence = select_evidence(
            question, qvec, results, self.embedder, budget_tokens=s.context_tokens, min_relevance=0.0
        )
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
        raw = clean_draft("".join(pieces))
        prompt_tokens = _count(llm, messages)
        checked = (
            check_citations(raw, evidence, self.embedder, threshold=s.support_threshold) if raw else None
        )
        reason = _refusal_reason(raw, checked, question, evidence)
        if reason:
            log.info("refused (%s): %s", reason, raw)
            yield finish(
                text=REFUSAL,
                abstained=True,
                abstain_reason=reason,
                backend=llm.backend,
                model=llm.model,
                prompt_tokens=prompt_tokens,
            )
            return
        assert checked is not None
        yield finish(
            text=checked.text,
            citations=checked.citations,
            sentences=checked.sentences,
            invented_citations=checked.invented,
            backend=llm.backend,
            model=llm.model,
            prompt_tokens=prompt_tokens,
        )

    def ask(self, question: str, **kwargs) -> Answer:
        for event in self.stream(question, **kwargs):
            if isinstance(event, AnswerEvent):
                return event.answer
        raise RuntimeError("the pipeline ended without an answer")  # pragma: no cover


def restates(sentences: list[AnswerSentence], question: str) -> bool:
    """Every sentence only repeats the question's words ("The license of Time-300B is [1]."):
    no answer, unless the question asks which paper, where the citation is the answer."""
    if not sentences or _ASKS_FOR_PAPER.search(question):
        return False
    asked = content_words(question)
    return all(content_words(strip_markers(x.text)) <= asked for x in sentences)


_META_WORDS = {
    "according",
    "source",
    "sources",
    "paper",
    "papers",
    "abstract",
    "study",
    "author",
    "authors",
    "text",
}


def _unfounded(sentences: list[AnswerSentence], draft: str, question: str, evidence: list[Evidence]) -> bool:
    """No sentence is supported, and the draft states numbers no source gives, declines, or is
    mostly words the sources never use (an answer from the model's own memory)."""
    if not sentences or any(x.supported for x in sentences):
        return False
    draft = strip_markers(draft)
    stated = set().union(numbers(question), *(numbers(ev.text) for ev in evidence))
    if numbers(draft) - stated or any(is_refusal(x.text) for x in sentences):
        return True
    new = content_words(draft) - content_words(question) - _META_WORDS
    sourced = set().union(*(content_words(ev.text) for ev in evidence))
    return len(new) >= 3 and len(new & sourced) < 0.5 * len(new)


def _refusal_reason(raw: str, checked, question: str, evidence: list[Evidence]) -> str:
    """Why the draft is not shown as an answer ("" when it is)."""
    if checked is None or is_refusal(raw):
        return "the model found no answer in the sources"
    if _unfounded(checked.sentences, raw, question, evidence):
        # Nothing the model wrote is backed by a source, and it invents numbers, declines, or
        # answers from its own memory: most often a question about a detail the abstracts do
        # not give. Refuse rather than show a guess.
        return "no sentence of the draft answer is supported by the sources"
    if restates(checked.sentences, question):
        return "the draft answer only restates the question"
    return ""


def _count(llm: LLM, messages: list[dict[str, str]]) -> int | None:
    try:
        return sum(llm.count_tokens(m["content"]) for m in messages)
    except Exception:  # counting is informative only
        return None
