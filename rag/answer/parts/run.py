"""An answer written part by part: each part's evidence (its paper's best sentences for it), its
own short prompt, generated in turn and streamed, checked and decided against that paper alone;
then the parts joined in the order asked, each cited to its own paper. A part its paper does not
answer says so, and the other parts stay."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from rag import question as qs
from rag.answer.citations import render_text
from rag.answer.events import Event, PreviewEvent, SourcesEvent, TokenEvent
from rag.answer.generate import write
from rag.answer.parts.plan import Part
from rag.answer.prompts import build_part_messages, count_prompt_tokens, renumber
from rag.answer.trust import Trust
from rag.llm import LLM, LLMError
from rag.search.evidence import Evidence, select_evidence
from rag.text import content_words
from rag.types import AnswerSentence, Citation, SearchResult, Step, Timings

if TYPE_CHECKING:
    from rag.answer.select.stage import Selection
    from rag.index.embedding import Embedder
    from rag.index.sentence_vectors import SentenceVectors
    from rag.settings import Settings


class Pipeline(Protocol):
    """What an answer by parts reads of the pipeline (rag.answer.pipeline imports this module)."""

    settings: Settings
    embedder: Embedder
    sentence_vectors: SentenceVectors

    def answering(self, question: str) -> Any: ...

    def llm(self, backend: str | None = None, model: str | None = None) -> LLM: ...

    def selection(self, intent: qs.Intent, results: list[SearchResult], evidence: list[Evidence],
                  trust: Trust) -> Selection: ...  # fmt: skip

    def judge_draft(self, intent: qs.Intent, draft: str, evidence: list[Evidence], llm: LLM, trust: Trust,
                    conversation: Any = None, selection: Selection | None = None) -> dict: ...  # fmt: skip


@dataclass
class Written:
    """One part answered: its evidence, prompt, draft and the answer fields its stages gave."""

    part: Part
    evidence: Evidence
    draft: str = ""
    fields: dict = field(default_factory=dict)
    prompt_tokens: int | None = None

    @property
    def answered(self) -> bool:
        return bool(self.fields) and not self.fields.get("abstained") and bool(self.fields.get("sentences"))


def part_evidence(pipeline: Pipeline, parts: Sequence[Part]) -> list[Evidence | None]:
    """Each part's source: its paper's best sentences for that part (the answer judge's order),
    within the paper's budget split among its parts. Parts on one paper show the union of their
    sentences, so each part's prompt is the same source and llama.cpp reuses it from the part before."""
    s, out = pipeline.settings, []
    shared = Counter(p.paper.id for p in parts)  # a paper's budget is split among its parts
    for part in parts:
        found = select_evidence(
            content_words(part.asked), pipeline.embedder.embed(part.asked), [SearchResult(1, part.paper, 0.0, [])],
            pipeline.embedder, budget_tokens=s.parts.budget_tokens // shared[part.paper.id],
            vectors=pipeline.sentence_vectors,
            answering=pipeline.answering(part.asked), floor=s.evidence_floor,
        )  # fmt: skip
        out.append(replace(found[0], number=part.number) if found else None)
    for ev in out:
        if ev is not None:
            same = [o for o in out if o is not None and o.paper.id == ev.paper.id]
            ev.chosen = sorted({i for o in same for i in o.chosen})
    return out


def part_intent(part: Part) -> qs.Intent:
    """The part as a question of its own, about its paper."""
    intent = qs.read(part.asked)
    return replace(
        intent, about=part.paper, kind=qs.Kind.ONE_PAPER, compared=(), compared_asked=(), subjects=()
    )


def write_parts(
    pipeline: Pipeline, parts: Sequence[Part], llm: LLM, trust: Trust, timings: Timings, started: float,
    temperature: float,
) -> Iterator[Event | Written]:  # fmt: skip
    """Each part in turn: its tokens as they come, then the part checked against its paper alone
    (its verdict asked right after its own prompt, which llama.cpp still holds)."""
    s = pipeline.settings
    evidence = part_evidence(pipeline, parts)
    yield PreviewEvent(
        list({ev.number: ev for ev in evidence if ev is not None}.values())
    )  # sources' best sentences
    for part, ev in zip(parts, evidence):
        if ev is None:
            yield Written(part, Evidence(part.number, part.paper, []))
            continue
        messages = build_part_messages(part.question, ev, part.label)
        draft = yield from write(llm, [(messages, renumber(part.number))], timings, started, max_tokens=s.parts.max_tokens,
                                 temperature=temperature)  # fmt: skip
        intent = part_intent(part)
        before = timings.verdict or 0.0
        timings.verdict = None
        selection = pipeline.selection(
            intent, [part.result or SearchResult(1, part.paper, 0.0, [])], [ev], trust
        )
        fields = pipeline.judge_draft(intent, draft, [ev], llm, trust, (messages, timings), selection)
        timings.verdict = before + (timings.verdict or 0.0)
        yield Written(part, ev, draft, fields, count_prompt_tokens(llm, messages))
        if len(parts) > 1:
            yield TokenEvent(" ")


def unanswered(part: Part, ev: Evidence) -> AnswerSentence:
    """What a part its paper does not answer says, in place of its answer."""
    title = ev.short_title if ev.sentences else f"“{part.paper.display_title[:60]}”"
    if part.label:
        text = f"The abstract of {title} does not state this for {part.label}."
    else:
        text = f"The abstract of {title} does not answer “{part.asked.rstrip('?. ')}?”."
    return AnswerSentence(text, [], True, 0.0, claim=False)


def compose(written: Sequence[Written]) -> dict:
    """The `Answer` fields of the parts joined in the order asked: each part's sentences cite its
    own paper under one number per paper; an unanswered part says so; the answer is a refusal
    only when no part was answered."""
    numbers: dict[str, int] = {}
    citations: list[Citation] = []
    sentences: list[AnswerSentence] = []
    trace = [Step("parts", "answered by parts", "", "; ".join(
        f"part {i}: {w.part.label or w.part.asked} from {w.part.paper.display_title[:60]}" for i, w in enumerate(written, 1)
    ))]  # fmt: skip
    for i, w in enumerate(written, 1):
        trace += [replace(t, reason=f"[part {i}] {t.reason}") for t in w.fields.get("trace", [])]
        if not w.answered:
            sentences.append(unanswered(w.part, w.evidence))
            continue
        local = {c.number: c for c in w.fields["citations"]}
        for c in w.fields["citations"]:
            if c.paper_id not in numbers:
                numbers[c.paper_id] = len(numbers) + 1
                citations.append(replace(c, number=numbers[c.paper_id]))
        for sentence in w.fields["sentences"]:
            cited = [numbers[local[n].paper_id] for n in sentence.citations if n in local]
            sentences.append(replace(sentence, citations=cited))
    refused = [w for w in written if not w.answered]
    fields: dict = dict(
        text=render_text(sentences, citations), citations=citations, sentences=sentences, trace=trace,
        removed=[x for w in written for x in w.fields.get("removed", [])],
        selected={"parts": [w.fields.get("selected") for w in written]},
        parts=[part_record(w) for w in written], abstained=False,
    )  # fmt: skip
    if len(refused) == len(written):
        first = refused[0].fields
        fields |= dict(abstained=True, text=first.get("text", ""), citations=[], sentences=[],
                       abstain_code=first.get("abstain_code", "no_evidence"),
                       abstain_reason=" ".join(render_text([unanswered(w.part, w.evidence)]) for w in written))  # fmt: skip
    return fields


def part_record(w: Written) -> dict:
    """What the answer keeps of a part (`Answer.parts`): its question, paper, text and papers cited."""
    return {
        "label": w.part.label,
        "asked": w.part.asked,
        "paper_id": w.part.paper.id,
        "answered": w.answered,
        "text": render_text(w.fields.get("sentences", []), w.fields.get("citations", []))
        if w.answered
        else "",
        "cited": sorted({c.paper_id for c in w.fields.get("citations", [])}) if w.answered else [],
        "draft": w.draft,
    }


def answer_by_parts(
    pipeline: Pipeline, parts: Sequence[Part], llm: LLM, trust: Trust, timings: Timings, started: float,
    temperature: float,
) -> Iterator[Event | dict]:  # fmt: skip
    """The parts written and checked in turn (events as they come), then the joined answer's
    fields (the last item)."""
    written: list[Written] = []
    try:
        for item in write_parts(pipeline, parts, llm, trust, timings, started, temperature):
            if isinstance(item, Written):
                written.append(item)
            else:
                yield item
    except LLMError as exc:
        yield {"text": " ".join(w.draft for w in written), "error": str(exc)}
        return
    tokens = [w.prompt_tokens for w in written]
    yield compose(written) | dict(
        draft="\n".join(w.draft for w in written),
        evidence=list({w.evidence.number: w.evidence for w in written if w.evidence.sentences}.values()),
        paper_confirmed={k: v for w in written for k, v in w.fields.get("paper_confirmed", {}).items()},
        entailed={k: v for w in written for k, v in w.fields.get("entailed", {}).items()},
        prompt_tokens=None if None in tokens else sum(t for t in tokens if t is not None),
    )


def shown_sources(parts: Sequence[Part], results: list[SearchResult]) -> list[SearchResult]:
    """The sources shown with an answer by parts: the parts' papers first, then the others found."""
    known = {r.paper.id: r for r in results} | {p.paper.id: p.result for p in parts if p.result}
    first = list(dict.fromkeys(p.paper.id for p in parts))
    shown = [known[i] for i in first if i in known] + [r for r in results if r.paper.id not in first]
    return [replace(r, rank=n) for n, r in enumerate(shown, 1)]


def stream_by_parts(
    pipeline: Pipeline, intent: qs.Intent, parts: Sequence[Part], results: list[SearchResult], trust: Trust,
    clock: tuple[Timings, float, Callable[..., Event]], backend: str | None, model: str | None,
    temperature: float | None,
) -> Iterator[Event]:  # fmt: skip
    """`Pipeline.stream` for an answer by parts: its sources, each part's tokens as they come, then
    the `AnswerEvent` that `finish` makes of the joined parts."""
    timings, started, finish = clock
    shown = shown_sources(parts, results)
    yield SourcesEvent(intent.query, shown)
    try:
        llm = pipeline.llm(backend, model)
    except LLMError as exc:
        yield finish(error=str(exc), retrieved=shown)
        return
    temp = pipeline.settings.temperature if temperature is None else temperature
    fields: dict = {}
    for item in answer_by_parts(pipeline, parts, llm, trust, timings, started, temp):
        if isinstance(item, dict):
            fields = item
        else:
            yield item
    yield finish(**fields, retrieved=shown, backend=llm.backend, model=llm.model)
