"""Evaluation metrics, one small function each. Per-item functions return a float in [0, 1] or
None when the metric does not apply to the item (no gold papers, an abstention, ...); the
report averages over the items where it applies."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from rag import text as tx
from rag.answer.citations import strip_markers

# ---- text normalization


def normalize(text: str) -> str:
    """`rag.text.normalize`, then hyphens, slashes and punctuation as spaces: "6,800" == "6800",
    "1.53×" == "1.53x", "Time-300B" == "time 300b"."""
    text = re.sub(r"[-_/]", " ", tx.normalize(text))
    text = re.sub(r"[^\w.%+ ]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def contains(text: str, variant: str) -> bool:
    """Whether `variant` occurs in `text` after normalization, starting at a word boundary.
    Numbers must match whole ("8" is not found in "18" or "0.8", but is in "8x"); words may
    continue ("toolkit" matches "toolkits")."""
    pattern = variant_pattern(variant)
    return pattern is not None and re.search(pattern, normalize(text)) is not None


def variant_pattern(variant: str) -> str | None:
    """The regular expression `contains` looks for in normalized text (None for an empty variant)."""
    needle = normalize(variant)
    if not needle:
        return None
    before = r"(?<![\d.])" if needle[0].isdigit() else r"(?<!\w)"
    after = r"(?!\d|\.\d)" if needle[-1].isdigit() else ""
    return before + re.escape(needle) + after


# ---- retrieval (ranked paper ids against the gold papers)


def hit_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float | None:
    """1 if any gold paper is among the first k retrieved papers, else 0."""
    if not gold:
        return None
    return float(any(p in gold for p in ranked[:k]))


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float | None:
    """Share of the gold papers found among the first k retrieved papers."""
    if not gold:
        return None
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def mrr(ranked: Sequence[str], gold: Sequence[str]) -> float | None:
    """Reciprocal rank of the first gold paper (0 when none was retrieved)."""
    if not gold:
        return None
    for rank, pid in enumerate(ranked, 1):
        if pid in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], gold: Sequence[str], k: int = 10) -> float | None:
    """Binary-relevance nDCG@k: rewards gold papers ranked early, normalized by the best order."""
    if not gold:
        return None
    dcg = sum(1.0 / math.log2(i + 2) for i, pid in enumerate(ranked[:k]) if pid in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(set(gold)), k)))
    return dcg / ideal


# ---- answers


def fact_recall(answer: str, facts: Sequence[Sequence[str]], question: str = "") -> float | None:
    """Share of required facts present in the answer (any accepted variant counts). `[n]` markers
    are stripped first (a "[1]" must not match the fact "1"), and a fact the question already
    contains is not counted: repeating the question is not knowing the answer."""
    facts = [f for f in facts if not any(contains(question, v) for v in f)]
    if not facts:
        return None
    answer = strip_markers(answer)
    return sum(any(contains(answer, v) for v in variants) for variants in facts) / len(facts)


def facts_cited(answer: str, facts: Sequence[Sequence[str]], cited_papers: Sequence[str], gold: Sequence[str],
                question: str = "") -> float:  # fmt: skip
    """1 when the answer holds every required fact and cites a gold paper, else 0 (a refusal
    scores 0): what a user needs from an answerable question."""
    recall = fact_recall(answer, facts, question)
    return float(recall in (1.0, None) and bool(set(cited_papers) & set(gold)))


def facts_papers_cited(answer: str, facts: Sequence[Sequence[str]], cited_papers: Sequence[str],
                       gold: Sequence[str], question: str = "") -> float:  # fmt: skip
    """1 when the answer holds every required fact and cites every gold paper (a comparison
    needs both of its papers), else 0."""
    recall = fact_recall(answer, facts, question)
    return float(recall in (1.0, None) and set(gold) <= set(cited_papers))


# ---- survey lists (every paper that fits a "which papers ...?" question)


def list_recall(listed: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of the papers that fit the question that the list holds."""
    return len(set(listed) & set(gold)) / len(set(gold)) if gold else None


def list_precision(listed: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of the listed papers that fit the question (an empty list: 0 when some paper fits)."""
    if not gold:
        return None
    return len(set(listed) & set(gold)) / len(set(listed)) if listed else 0.0


def outside_area(areas: Sequence[str], wanted: str | Sequence[str] | None) -> float | None:
    """1 when a listed paper's primary area is not the area (or one of the areas) the question
    states, else 0."""
    if not wanted:
        return None
    norm = lambda a: " ".join((a or "").replace("&amp;", "&").lower().split())  # noqa: E731
    allowed = {norm(w) for w in ([wanted] if isinstance(wanted, str) else wanted)}
    return float(any(norm(a) not in allowed for a in areas))


def oversized(listed: Sequence[str], gold: Sequence[str]) -> float | None:
    """1 when the list is longer than three times the papers that fit, else 0."""
    return float(len(set(listed)) > 3 * len(set(gold))) if gold else None


def outside_filter(statuses: Sequence[str], wanted: Sequence[str]) -> float | None:
    """1 when a listed paper's status is outside the statuses the question states, else 0."""
    if not wanted:
        return None
    allowed = {w.lower() for w in wanted}
    return float(any(not any(s and s in w for w in allowed) for s in statuses))


# ---- citations (each citation: the cited paper id and the passage shown as support)


def citation_precision(cited: Sequence[tuple[str, str]], gold: Sequence[str], facts) -> float | None:
    """Share of citations that point to a gold paper AND whose cited passage contains a
    required fact (for items without facts, the paper match alone counts). An answer that cites
    nothing scores 0: an uncited answer is not a precisely cited one."""
    if not gold:
        return None
    if not cited:
        return 0.0
    good = 0
    for pid, passage in cited:
        if pid in gold and (not facts or any(contains(passage, v) for f in facts for v in f)):
            good += 1
    return good / len(cited)


def citation_gold_share(cited_papers: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of an answer's citations that point to a gold paper, whatever passage they show: among
    many similar papers, how often the answer leans on the wrong one. No citations: None."""
    if not gold or not cited_papers:
        return None
    return sum(p in gold for p in cited_papers) / len(cited_papers)


def citation_recall(cited_papers: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of gold papers the answer cites."""
    if not gold:
        return None
    return len(set(cited_papers) & set(gold)) / len(set(gold))


def refused(abstained: bool) -> float:
    """1 when the system refused the item. Averaged over unanswerable items it is the share
    rightly refused; over answerable items, the share wrongly refused."""
    return float(abstained)


def bootstrap_ci(
    values: Sequence[float | None], *, rounds: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """95 % percentile-bootstrap interval of the mean of the values that apply (items resampled
    with replacement)."""
    vals = np.asarray([v for v in values if v is not None], dtype=float)
    if len(vals) < 2:
        return None
    rng = np.random.default_rng(seed)
    means = vals[rng.integers(0, len(vals), size=(rounds, len(vals)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def cited_sentence_share(sentence_citations: Sequence[Sequence[int]]) -> float | None:
    """Share of answer sentences that carry at least one citation."""
    if not sentence_citations:
        return None
    return sum(bool(c) for c in sentence_citations) / len(sentence_citations)


def supported_sentence_share(supported: Sequence[bool]) -> float | None:
    """Share of answer sentences the citation checker found backed by a source (faithfulness)."""
    if not supported:
        return None
    return sum(supported) / len(supported)


# ---- refusals (aggregate over items: `abstained` flags and whether each item is answerable)


def abstention_scores(abstained: Sequence[bool], answerable: Sequence[bool], correct: Sequence[bool]) -> dict:
    """Abstention precision (abstentions that were on unanswerable items), recall (unanswerable
    items abstained on), accuracy (abstained exactly when unanswerable), abstain rate, and
    LitQA-style accuracy (correct / all) and precision (correct / answered), where an item is
    correct when answered with every fact, or abstained on when unanswerable."""
    n = len(abstained)
    if not n:
        return {}
    unans = [not a for a in answerable]
    tp = sum(a and u for a, u in zip(abstained, unans))
    answered = n - sum(abstained)
    correct_answers = sum(c and not a for c, a in zip(correct, abstained))
    return {
        "abstain_precision": tp / sum(abstained) if any(abstained) else None,
        "abstain_recall": tp / sum(unans) if any(unans) else None,
        "abstain_accuracy": sum(a == u for a, u in zip(abstained, unans)) / n,
        "abstain_rate": sum(abstained) / n,
        "litqa_accuracy": sum(correct) / n,
        "litqa_precision": correct_answers / answered if answered else None,
    }


# ---- latency


def percentiles(values: Sequence[float | None]) -> dict[str, float | None]:
    """p50 and p95 (seconds) of the measured values; None when nothing was measured."""
    vals = [v for v in values if v is not None]
    if not vals:
        return {"p50": None, "p95": None}
    return {"p50": float(np.percentile(vals, 50)), "p95": float(np.percentile(vals, 95))}


def mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None
