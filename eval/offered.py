"""`citewise eval --offered`: what each config puts in front of the model, without generating.

For every gold item at each index size: the sources the pipeline would offer for the question,
the share of the item's required facts those sources contain (an answer cannot state what it is
not shown), and the prompt's size in the model's own tokens, which sets the time to first token
(prefill is most of it on 2 cores). A source rule or budget is tried in minutes this way; the run
with answers decides. Follow-ups are asked after their earlier turns are searched, not answered,
so a follow-up is not narrowed to the paper the last answer cited here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from eval.configs import get_config
from eval.gold import GoldItem
from eval.metrics import fact_recall
from eval.runner import System, make_system
from eval.scale import pipeline_with
from rag import question as qs
from rag.answer.pipeline import Pipeline
from rag.answer.prompts import build_messages, count_prompt_tokens


@dataclass
class Offer:
    """What one item's prompt holds under one config at one index size."""

    config: str
    distractors: int
    item: str
    sources: list[str]
    facts_shown: float | None  # share of the required facts the offered sources contain
    prompt_tokens: int | None


def offer(pipeline: Pipeline, item: GoldItem, config: str, distractors: int) -> Offer:
    """The sources `pipeline` offers for `item` and what they hold."""
    history = System(pipeline).history(item, answer=False)
    intent = qs.parse(item.question, history)
    qvec, results = pipeline.find(intent)
    evidence = pipeline.sources(intent, qvec, results)
    shown = fact_recall(" ".join(ev.text for ev in evidence), item.facts, item.question)
    tokens = count_prompt_tokens(pipeline.llm(), build_messages(intent.query, evidence))
    return Offer(config, distractors, item.id, [ev.paper.id for ev in evidence], shown, tokens)


def measure(
    base: Pipeline,
    items: Sequence[GoldItem],
    configs: Sequence[str],
    distractors: Sequence[int],
    progress=None,
) -> list[Offer]:
    """Every item under every citewise config at every index size, each config's pipeline built
    as the eval builds it (`runner.make_system`)."""
    chosen = [get_config(name) for name in configs]
    if any(c.system != "citewise" for c in chosen):
        raise ValueError("--offered shows what citewise offers the model: choose citewise configs")
    out: list[Offer] = []
    for n in distractors or [0]:
        indexed, _ = pipeline_with(n, base, items, size=max(distractors or [0]))
        for config in chosen:
            pipeline = make_system(config, indexed).pipeline
            rows = progress(items, f"{config.name} N={n}") if progress else items
            out += [offer(pipeline, item, config.name, n) for item in rows]
    return out


def table(offers: Sequence[Offer]) -> list[str]:
    """Per config and index size: facts shown (items with facts), prompt tokens, sources."""
    lines = [
        "| config | N | facts shown | prompt tokens p50 | prompt tokens mean | items with one source |",
        "|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, int], list[Offer]] = {}
    for o in offers:
        groups.setdefault((o.config, o.distractors), []).append(o)
    for (name, n), rows in groups.items():
        shown = [o.facts_shown for o in rows if o.facts_shown is not None]
        tokens = [o.prompt_tokens for o in rows if o.prompt_tokens is not None]
        ones = sum(len(o.sources) == 1 for o in rows)
        facts = f"{statistics.mean(shown):.3f} ({len(shown)})" if shown else "– (0)"
        p50, mean = (
            (f"{statistics.median(tokens):.0f}", f"{statistics.mean(tokens):.0f}") if tokens else ("–", "–")
        )
        lines.append(f"| {name} | {n:,} | {facts} | {p50} | {mean} | {ones} of {len(rows)} |")
    return lines
