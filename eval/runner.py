"""Run gold items through a config and score every item.

Follow-up items answer their earlier turns first, as the user would have seen them (a follow-up's
"it" is the paper the last answer cited), and score only the follow-up: the gold item tests the
follow-up, not the first answer. Retrieval-only runs and the baseline, which keeps no history, use
the earlier turns' search results alone.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from eval import metrics as m
from eval import wholeness
from eval.configs import Config
from eval.gold import GoldItem
from rag import text as tx
from rag.answer.pipeline import Pipeline
from rag.answer.stages import OPTIONAL, judge
from rag.answer.trust import Stance
from rag.answer.verdicts import entail_key
from rag.types import Answer, Timings, Turn

RANK_DEPTH = 10  # nDCG@10 needs ten ranked papers


@dataclass
class ItemResult:
    """One gold item under one config: what was retrieved and answered, and its scores."""

    config: str
    id: str
    type: str
    question: str
    query: str
    gold_papers: list[str]
    ranked: list[str]
    scores: dict[str, float | None]
    latency: dict[str, float | None]
    answered: bool = False  # False in retrieval-only runs
    answer: str = ""
    abstained: bool = False
    abstain_reason: str = ""
    abstain_code: str = ""  # the rule that refused
    citations: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # paper ids of the sources shown to the model
    error: str = ""
    draft: str = ""  # the model's text before checking
    # paper title -> the model said the paper answers the question (paper_fit)
    paper_confirmed: dict[str, bool] = field(default_factory=dict)
    removed: list[dict[str, Any]] = field(default_factory=list)  # sentences that failed their checks
    variants: dict[str, dict[str, float | None]] = field(default_factory=dict)  # ablation: rule off -> scores
    distractors: int | None = None  # distractor abstracts in the index (`--distractors`), else None
    turns: list[dict[str, Any]] = field(default_factory=list)  # the earlier turns: question, draft, cited
    selected: str = ""  # the selector's outcome (draft, quote, refuse), when it decided
    parts: list[dict[str, Any]] = field(
        default_factory=list
    )  # an answer by parts: each part's paper and cited

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def retrieval_scores(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float | None]:
    return {
        "hit@1": m.hit_at_k(ranked, gold, 1),
        "hit@5": m.hit_at_k(ranked, gold, 5),
        "recall@5": m.recall_at_k(ranked, gold, 5),
        "recall@10": m.recall_at_k(ranked, gold, 10),
        "mrr": m.mrr(ranked, gold),
        "ndcg@10": m.ndcg_at_k(ranked, gold, 10),
    }


def answer_scores(item: GoldItem, answer: Answer) -> dict[str, float | None]:
    refusals = {
        "refused_unanswerable": None if item.answerable else m.refused(answer.abstained),
        "refused_answerable": m.refused(answer.abstained) if item.answerable else None,
    }
    if answer.abstained or answer.error:
        facts = 0.0 if item.answerable and m.fact_recall("", item.facts, item.question) is not None else None
        return refusals | {"fact_recall": facts, "facts_cited": 0.0 if item.answerable else None,
                           "facts_papers_cited": 0.0 if item.answerable else None, "citation_precision": None, "citation_gold_share": None,
                           "citation_recall": 0.0 if item.answerable else None, "cited_sentences": None,
                           "supported_sentences": None, "answer_words": None, "empty_slot": None}  # fmt: skip
    cited = [(c.paper_id, c.passage) for c in answer.citations]
    return refusals | {
        "answer_words": float(len(answer.text.split())),
        "empty_slot": float(tx.has_empty_slot(answer.text)),
        "fact_recall": m.fact_recall(answer.text, item.facts, item.question),
        "facts_cited": m.facts_cited(
            answer.text, item.facts, [p for p, _ in cited], item.papers, item.question
        )
        if item.answerable
        else None,
        "citation_precision": m.citation_precision(cited, item.papers, item.facts)
        if item.answerable
        else None,
        "citation_gold_share": m.citation_gold_share([p for p, _ in cited], item.papers),
        "facts_papers_cited": m.facts_papers_cited(
            answer.text, item.facts, [p for p, _ in cited], item.papers, item.question
        )
        if item.answerable
        else None,
        "citation_recall": m.citation_recall([p for p, _ in cited], item.papers) if item.answerable else None,
        "cited_sentences": m.cited_sentence_share([s.citations for s in answer.sentences]),
        "supported_sentences": m.supported_sentence_share([s.supported for s in answer.sentences]),
        # Shown sentences the model's verdict judged, and those it found unstated or contradicted.
        "judged_sentences": float(sum(any(c.name == "verdict" for c in s.checks) for s in answer.sentences)),
        "doubted_sentences": float(sum(bool(s.doubted) for s in answer.sentences)),
    }


def survey_scores(item: GoldItem, hits) -> dict[str, float | None]:
    """The survey list against the papers that fit the question (retrieval: no model needed)."""
    listed = [h.paper.id for h in hits]
    return {
        "list_recall": m.list_recall(listed, item.papers),
        "list_precision": m.list_precision(listed, item.papers),
        "list_outside_filter": m.outside_filter(
            [h.paper.status for h in hits], item.filter.get("status", [])
        ),
        "list_outside_area": m.outside_area(
            [h.paper.extra.get("primary_area", "") for h in hits], item.filter.get("area")
        ),
        "list_oversized": m.oversized(listed, item.papers),
        "listed": float(len(listed)),
    }


def is_correct(item: GoldItem, answer: Answer) -> bool:
    """Answered with every required fact, or abstained on an unanswerable item."""
    if not item.answerable:
        return answer.abstained
    recall = m.fact_recall(answer.text, item.facts, item.question)
    return not answer.abstained and not answer.error and recall in (1.0, None)


class System:
    """What a config runs: ranking for retrieval metrics and answering, with the same history."""

    # The earlier turns of a follow-up, answered once per run and shown to every config: the item
    # tests the follow-up, and each config then reads the same "it" (and the run is shorter).
    answered_turns: dict[tuple[str, ...], list[Turn]] = {}

    def __init__(self, pipeline: Pipeline, baseline=None, ablation: bool = False):
        self.pipeline, self.baseline, self.ablation = pipeline, baseline, ablation

    def history(self, item: GoldItem, answer: bool = True) -> list[Turn]:
        """The earlier turns of a follow-up item: answered when `answer` (not for the baseline),
        else their search results alone (what the query rewriter reads when nothing was cited)."""
        key = tuple(item.history)
        if answer and self.baseline is None and key in self.answered_turns:
            return list(self.answered_turns[key])
        turns: list[Turn] = []
        for question in item.history:
            if answer and self.baseline is None:
                turns.append(Turn(question, self.pipeline.ask(question, history=turns)))
                continue
            intent = self.pipeline.parse(question, turns)
            results = self.pipeline.search(
                intent.query, self.pipeline.settings.answer_k, alternatives=intent.alternatives
            )
            turns.append(
                Turn(question, Answer(question, "", [], [], False, results, Timings(), query=intent.query))
            )
        if answer and self.baseline is None and turns:
            self.answered_turns[key] = list(turns)
        return turns

    def rank(self, question: str, turns: list[Turn]) -> tuple[str, list[str]]:
        if self.baseline is not None:
            return question, self.baseline.rank(question, RANK_DEPTH)
        intent = self.pipeline.parse(question, turns)
        ranked = self.pipeline.search(intent.query, RANK_DEPTH, alternatives=intent.alternatives)
        return intent.query, [r.paper.id for r in ranked]

    def ask(self, question: str, turns: list[Turn]) -> Answer:
        if self.baseline is not None:
            return self.baseline.ask(question, turns)
        return self.pipeline.ask(question, history=turns)

    def variants(self, item: GoldItem, reply: Answer) -> dict[str, dict[str, float | None]]:
        """The item's scores with each check and optional stage switched off in turn, from the same
        draft (a check switched off is a feature the sentence decision reads at its mean)."""
        if self.baseline is not None or not self.ablation or reply.error:
            return {}
        trust, stages = self.pipeline.trust, tuple(self.pipeline.settings.answer_stages)
        out = {}
        for name in (*trust.checks, *(s for s in stages if s in OPTIONAL)):
            variant = trust.without(name)
            fields = judge(
                reply.intent,
                reply.draft,
                reply.evidence,
                self.pipeline.embedder,
                variant,
                confirm=lambda ev, _asked: reply.paper_confirmed.get(ev.paper.display_title),
                stages=[s for s in stages if s != name],
                entail=lambda claim, _passage, ev: (
                    Stance(v) if (v := reply.entailed.get(entail_key(claim, ev))) else None
                ),
            )
            answer = replace(reply, **{"text": "", "citations": [], "abstained": False} | fields)
            out[name] = answer_scores(item, answer)
        return out


def make_system(config: Config, base: Pipeline, ablation: bool = False) -> System:
    """A pipeline with the config's settings, sharing the base pipeline's embedder and store."""
    settings = base.settings.model_copy(update=config.overrides)
    for section in ("trust", "parts"):  # a section: its fields over the base's, not a dict in its place
        if section in config.overrides:
            value = getattr(base.settings, section).model_copy(update=config.overrides[section])
            settings = settings.model_copy(update={section: value})
    pipeline = Pipeline(settings, store=base.store, embedder=base.embedder, llm=base._llm)
    if config.system != "llamaindex":
        return System(pipeline, ablation=ablation)
    from eval.baseline import LlamaIndexBaseline

    baseline = LlamaIndexBaseline(
        base.store,
        base.embedder,
        pipeline.llm(),
        max_tokens=settings.max_answer_tokens,
        temperature=settings.temperature,
    )
    return System(pipeline, baseline)


def run_item(system: System, config: str, item: GoldItem, answer: bool) -> ItemResult:
    turns = system.history(item, answer)
    started = time.perf_counter()
    query, ranked = system.rank(item.question, turns)
    latency: dict[str, float | None] = {
        "retrieval": time.perf_counter() - started,
        "first_token": None,
        "total": None,
        "verdict": None,  # the verdict stage's call, after the answer's cached prompt
    }
    result = ItemResult(config, item.id, item.type, item.question, query, item.papers, ranked,
                        retrieval_scores(ranked, item.papers), latency)  # fmt: skip
    result.turns = [
        {"question": t.question, "query": t.answer.query, "draft": t.answer.draft,
         "cited": sorted({c.paper_id for c in t.answer.citations})}
        for t in turns
    ]  # fmt: skip
    if item.type == "survey" and system.baseline is None:
        intent = system.pipeline.parse(item.question, turns)
        if system.pipeline.unsure(intent):  # as the answer path does: the model reads it again
            intent, _ = system.pipeline.reread(intent, history=turns)
        result.scores |= survey_scores(item, system.pipeline.survey.find(intent))
    if not answer:
        return result
    reply = system.ask(item.question, turns)
    result.answered = True
    result.answer, result.abstained, result.error = reply.text, reply.abstained, reply.error
    result.abstain_reason, result.abstain_code = reply.abstain_reason, reply.abstain_code
    result.citations = [
        {"number": c.number, "paper_id": c.paper_id, "title": c.title, "passage": c.passage, "score": c.score}
        for c in reply.citations
    ]
    result.sources = [ev.paper.id for ev in reply.evidence]
    result.scores |= answer_scores(item, reply)
    result.draft, result.paper_confirmed = reply.draft, reply.paper_confirmed
    result.removed = [
        {
            "text": x.text,
            "failed": [c.detail for c in x.checks if not c.passed],
            "checks": [c.name for c in x.checks if not c.passed],
        }
        for x in reply.removed
    ]
    result.variants = system.variants(item, reply)
    if system.baseline is not None:  # it has no citation checker: support was never assessed
        result.scores["supported_sentences"] = None
    result.scores["correct"] = float(is_correct(item, reply))
    if system.baseline is None:  # the baseline shows the model's text as it is
        whole, own = wholeness.whole_sentences(reply), wholeness.quotes_own_paper(reply)
        result.scores["whole_sentences"] = None if whole is None else float(whole)
        result.scores["quotes_own_paper"] = None if own is None else float(own)
    result.parts = [{k: p[k] for k in ("label", "paper_id", "answered", "cited")} for p in reply.parts]
    result.scores["parts_own_paper"] = wholeness.parts_own_paper(reply) if reply.parts else None
    if reply.selected and reply.selected.get("decision"):
        result.selected = reply.selected["decision"]["outcome"]
        result.scores["select_ms"] = 1000 * reply.selected.get("seconds", 0.0)
    result.scores["prompt_tokens"] = float(reply.prompt_tokens) if reply.prompt_tokens else None
    result.scores["cached_tokens"] = float(reply.cached_tokens) if reply.cached_tokens is not None else None
    latency["first_token"], latency["total"] = reply.timings.first_token, reply.timings.total
    latency["verdict"] = reply.timings.verdict
    if reply.backend == "replay":  # stored drafts: no generation was timed, no prompt was cached
        latency["first_token"] = latency["total"] = latency["verdict"] = None
    return result


def run_config(
    config: Config, items: Iterable[GoldItem], base: Pipeline, *, answer: bool = True, ablation: bool = False
) -> list[ItemResult]:
    """Every item's result under one config (`eval.harness.evaluate` interleaves several)."""
    system = make_system(config, base, ablation)
    return [run_item(system, config.name, item, answer) for item in items]
