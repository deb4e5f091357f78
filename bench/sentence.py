"""What the sentence decision adds to an answer (`python -m bench.sentence`): the time of its
features and its logistic regression per (sentence, source) pair, beside the checks it reads, on
labelled draft sentences of the conference (their abstracts as the source), and per answer of
3 sentences against 3 offered sources."""

from __future__ import annotations

import json
import platform
import time

import numpy as np

from eval.judge.corpus import abstract_sentences, conference
from eval.judge.sentence_data import DRAFTS
from rag.answer.trust import Claim, Source, Trust
from rag.answer.trust.keep import features
from rag.index.embedding import embedder_from_settings
from rag.search.evidence import evidence_for
from rag.settings import Settings
from rag.text import content_words
from rag.types import Paper


def cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    settings = Settings()
    embedder, trust = embedder_from_settings(settings), Trust(settings.trust)
    labelled = [json.loads(line) for line in DRAFTS.read_text().splitlines()][:100]
    pairs = []
    for row in labelled:
        sentences = abstract_sentences(row["paper_id"])
        paper = Paper(row["paper_id"], " ".join(sentences), conference()[row["paper_id"]]["title"])
        claim = sentences[0]  # any sentence: the timing does not depend on the label
        pairs.append(
            (claim, np.asarray(embedder.embed(claim), dtype=np.float32), evidence_for(paper, embedder))
        )
    checks, decision = [], []
    for claim, vector, ev in pairs:
        started = time.perf_counter()
        verdict = trust.verify(claim, vector, ev, whole=True, decide=False)
        checked = time.perf_counter()
        trust.decision.decide(verdict.features)
        decided = time.perf_counter()
        checks.append(checked - started)
        decision.append(decided - checked)
    # The features are computed inside verify; timed alone here.
    feats = []
    for claim, vector, ev in pairs:
        verdict = trust.verify(claim, vector, ev, whole=True, decide=False)
        told = Claim(claim, frozenset(content_words(claim)))
        started = time.perf_counter()
        features(told, Source(ev.text, verdict.best.text if verdict.best else "", verdict.score, ev.text),
                 verdict.checks, 0.5)  # fmt: skip
        feats.append(time.perf_counter() - started)
    ms = lambda xs: 1000 * float(np.median(xs))  # noqa: E731
    per_pair = ms(feats) + ms(decision)
    print(f"CPU: {cpu()}; {len(pairs)} (sentence, abstract) pairs")
    print(
        "| per (sentence, source) pair, ms p50 | checks | decision's features | logistic | per answer (3 x 3 pairs) |"
    )
    print("|---|---|---|---|---|")
    print(f"| | {ms(checks):.2f} | {ms(feats):.3f} | {ms(decision):.3f} | {9 * per_pair:.2f} |")


if __name__ == "__main__":
    main()
