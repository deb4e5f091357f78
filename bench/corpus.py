"""Synthetic corpora of N realistic abstracts for scaling benchmarks.

Abstracts are built from the seed corpus's own sentences (its vocabulary and sentence shapes),
recombined with invented method and dataset names, 80-350 words long. Every (N/50)-th
paper also states a known-item fact that no other paper states (an invented method reaching a
score on an invented benchmark); its question, worded differently, must retrieve that paper at
every N.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from rag.index.ingest import dedupe
from rag.index.readers import read_paths
from rag.text import sentence_spans

ROOT = Path(__file__).resolve().parent.parent
SYLLABLES = "ka lo ri ven tor mi sa qu el dra no fen zu bar ti os lum pex ra vo gan hel".split()
AREAS = [
    "language models", "vision transformers", "reinforcement learning", "time series forecasting",
    "graph neural networks", "speech recognition", "protein design", "robotic manipulation",
    "recommendation systems", "3D reconstruction", "continual learning", "federated learning",
]  # fmt: skip
OPENERS = [
    "We study {area} under a limited compute budget.",
    "This paper revisits how {area} scale with data and model size.",
    "Recent progress in {area} has exposed a gap between benchmarks and deployment.",
    "We introduce {method}, a new approach to {area}.",
]
FACT = "Our method {method} reaches {score}% accuracy on the {bench} benchmark."
QUESTION = "Which approach gets {score} percent on {bench}?"


@dataclass
class Planted:
    question: str
    paper_id: str


def seed_sentences() -> list[str]:
    papers, _ = dedupe(read_paths([ROOT / "seeds"]).papers)
    out = []
    for p in papers:
        for s, e in sentence_spans(p.abstract):
            sentence = p.abstract[s:e]
            if 6 <= len(sentence.split()) <= 60 and "http" not in sentence:
                out.append(sentence)
    return out


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


def generate(n: int, *, seed: int = 0, planted_count: int = 50) -> tuple[list[dict], list[Planted]]:
    rng = random.Random(seed)
    pool = seed_sentences()
    papers: list[dict] = []
    planted: list[Planted] = []
    used: set[str] = set()
    plant_every = max(1, n // planted_count)
    for i in range(n):
        method = _name(rng, 3)
        area = rng.choice(AREAS)
        target = rng.randint(80, 350)
        sentences = [rng.choice(OPENERS).format(area=area, method=method)]
        if i % plant_every == 0:
            bench = _name(rng, 4)
            while bench in used:
                bench = _name(rng, 4)
            used.add(bench)
            score = f"{rng.randint(50, 98)}.{rng.randint(0, 9)}"
            sentences.append(FACT.format(method=method, score=score, bench=bench))
            planted.append(Planted(QUESTION.format(score=score, bench=bench), f"syn-{i:06d}"))
        words = sum(len(s.split()) for s in sentences)
        while words < target:
            # Name the seed sentences' methods after this paper's, as abstracts do.
            sentence = re.sub(r"\b[A-Z][A-Za-z]*[A-Z][A-Za-z-]*\b", method, rng.choice(pool))
            if words + len(sentence.split()) > 350:
                if words >= 80:
                    break
                continue
            sentences.append(sentence)
            words += len(sentence.split())
        papers.append(
            {
                "id": f"syn-{i:06d}",
                "title": f"{method}: {area.capitalize()} Revisited",
                "abstract": " ".join(sentences),
            }
        )
    return papers, planted


def write(n: int, folder: Path, *, seed: int = 0) -> tuple[Path, list[Planted]]:
    """Write N papers as `corpus.jsonl` in `folder` (one file, as a conference dump would be)."""
    papers, planted = generate(n, seed=seed)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for p in papers:
            f.write(json.dumps(p) + "\n")
    return path, planted
