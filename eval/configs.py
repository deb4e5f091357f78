"""Named evaluation configs: each is the product with some settings changed, or the plain
llama-index baseline. `citewise eval --config NAME` picks them; several run side by side."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Config:
    name: str
    description: str
    overrides: dict[str, Any] = field(default_factory=dict)
    system: str = "citewise"  # or "llamaindex": the VectorStoreIndex baseline


CONFIGS: dict[str, Config] = {
    c.name: c
    for c in [
        Config("hybrid", "citewise defaults: dense + BM25 fused by RRF, 3 sources"),
        Config(
            "whole",
            "the answer before answers by parts: one prompt over all sources for comparisons, follow-ups and "
            "two-part questions",
            {"parts": {"enabled": False}},
        ),
        Config(
            "parts",
            "answers by parts: comparisons, follow-ups and two-part questions answered part by part, each "
            "part from its own paper",
            {"parts": {"enabled": True}},
        ),
        Config("dense", "dense retrieval only", {"fusion": "dense", "rerank_papers": 0}),
        Config("bm25", "BM25 keyword retrieval only", {"fusion": "bm25", "rerank_papers": 0}),
        Config("norerank", "hybrid without re-ranking papers by their best sentences", {"rerank_papers": 0}),
        Config("k5", "hybrid with 5 sources per answer", {"answer_k": 5}),
        Config(
            "nosubject",
            "hybrid, sources not narrowed to the question's named subject",
            {"source_rules": ["pin_follow_ups"]},
        ),
        Config(
            "nopin",
            "hybrid, a follow-up's sources not narrowed to the paper it points back to",
            {"source_rules": ["on_subject"]},
        ),  # fmt: skip
        Config(
            "allpapers",
            "hybrid, a one-paper question reads every paper near the best sentence, not only those near the first paper",
            {"one_paper_within": 0.0},
        ),
        *[
            Config(
                f"budget{n}", f"hybrid with a {n}-token source budget (560 by default)", {"context_tokens": n}
            )
            for n in (200, 280, 400, 650)
        ],
        Config("judged", "hybrid, evidence sentences ordered by the answer judge", {"evidence_judge": True}),
        *[
            Config(
                f"judged{n}",
                f"hybrid, evidence ordered by the answer judge, a {n}-token budget",
                {"evidence_judge": True, "context_tokens": n},
            )  # fmt: skip
            for n in (200, 240, 280, 350)
        ],
        *[
            Config(
                f"floor{n:02d}",
                f"hybrid, evidence by the answer judge, sentences beyond each source's best only at p >= 0.{n:02d}",
                {"evidence_judge": True, "evidence_floor": n / 100},
            )  # fmt: skip
            for n in (2, 5, 10, 20)
        ],
        Config("qwen0.5b", "hybrid with the 0.5B model", {"model": "qwen0.5b"}),
        Config("qwen1.5b", "hybrid with the 1.5B model (the chat default)", {"model": "qwen1.5b"}),
        Config("smollm2", "hybrid with SmolLM2-135M (CI speed, weak answers)", {"model": "smollm2"}),
        Config(
            "llamaindex",
            "baseline: llama-index VectorStoreIndex + default query engine, same Chroma, embedder, LLM",
            system="llamaindex",
        ),
    ]
}

# What `citewise eval` runs when no --config is given: the product against the baseline a user
# would otherwise build, with answers, plus the single-retriever ablations scored on retrieval
# only (what they change), so the run fits in 30 minutes on 2 cores.
DEFAULT_CONFIGS = ["hybrid", "llamaindex", "dense", "bm25"]
DEFAULT_RETRIEVAL_ONLY = {"dense", "bm25"}


def get_config(name: str) -> Config:
    if name not in CONFIGS:
        raise KeyError(f"unknown config {name!r}; choose from {', '.join(CONFIGS)}")
    return CONFIGS[name]
