"""The distractor corpus (eval/distractors.py) and the report of a run against it (eval/scale.py)."""

from __future__ import annotations

import random
import re
import statistics
from dataclasses import replace

import numpy as np
import pytest

from eval.distractors import MAX_COSINE, Rewriter, generate
from eval.runner import ItemResult
from eval.scale import changed, paired_first_token, scale_summary, section
from rag import text as tx
from rag.types import Paper
from tests.fakes import FakeEmbedder

SEEDS = [
    Paper(id=f"s{i}", title=f"Study {i} of SparseNet", abstract=text)
    for i, text in enumerate(
        [
            "We introduce SparseNet, a pruning method for vision transformers. SparseNet removes 40% of "
            "the attention heads with a loss of 0.3 points on ImageNet. Training costs drop by a factor of 2.5.",
            "Large language models forget facts during continual pretraining. We measure forgetting on "
            "TriviaQA and find that 12 percent of facts are lost after 100B tokens. A replay buffer helps.",
            "Graph neural networks struggle with long-range interactions. Our method MixHop-X mixes "
            "neighbourhoods at several radii and improves accuracy by 4.1 points on ogbn-arxiv.",
        ]
    )
]


def test_distractors_are_deterministic_and_a_prefix_of_a_larger_set():
    small, _ = generate(4, SEEDS, FakeEmbedder(), seed=3)
    large, _ = generate(9, SEEDS, FakeEmbedder(), seed=3)
    assert small == large[:4]
    assert len({r["id"] for r in large}) == 9


def test_distractors_share_the_field_but_not_the_facts_names_or_numbers():
    facts = ["0.3", "TriviaQA", "4.1"]
    records, stats = generate(30, SEEDS, FakeEmbedder(), facts, seed=1)
    seed_numbers = set().union(*(tx.numbers(p.abstract, words=False) for p in SEEDS))
    for r in records:
        assert r["abstract"] and r["title"]
        assert "TriviaQA" not in r["abstract"] and "MixHop-X" not in r["abstract"]  # names invented
        assert not re.search(r"(?<![\d.])(0\.3|4\.1)(?![\d])", r["abstract"])  # no gold number
    stated = set().union(*(tx.numbers(r["abstract"], words=False) for r in records))
    assert len(stated - seed_numbers) > len(stated & seed_numbers)  # numbers are new, not copied
    vocabulary = {w for p in SEEDS for w in tx.content_words(p.abstract)}
    shared = [len(tx.content_words(r["abstract"]) & vocabulary) for r in records]
    assert min(shared) >= 3  # the field's words stay
    assert stats.max_cosine <= MAX_COSINE
    assert stats.sentences > 0 and stats.papers == 30


def test_no_distractor_title_is_a_near_copy_of_a_seed_title():
    # Titles are written from the related paper's title; a short one with few words to swap came
    # out unchanged (the v2 corpus held 230 seed titles all but word for word).
    titles = ["Pruning attention heads of vision transformers", "Forgetting facts during continual pretraining",
              "Mixing neighbourhoods for long-range graph learning"]  # fmt: skip
    seeds = [replace(p, title=t) for p, t in zip(SEEDS, titles)]
    embedder = FakeEmbedder()
    records, stats = generate(60, seeds, embedder, seed=1)
    written = np.asarray(embedder.embed_batch([r["title"] for r in records]))
    closest = (written @ np.asarray(embedder.embed_batch(titles)).T).max(axis=1)
    assert closest.max() <= MAX_COSINE and stats.title_max_cosine <= MAX_COSINE
    assert stats.titles_rewritten > 0  # there were near copies to rewrite
    assert {r["title"].lower() for r in records}.isdisjoint(t.lower() for t in titles)


def test_a_distractor_is_related_to_one_seed_paper_but_takes_none_of_its_sentences():
    rewriter = Rewriter(SEEDS)
    source = {s: k for k, ss in enumerate(rewriter.sentences) for s in ss}
    for i in range(12):
        title, templates = rewriter.plan(i, seed=5)
        related = rewriter.related(i)
        assert title == SEEDS[related].title
        donors = [source[t] for t in templates]
        assert related not in donors  # no twin: its related paper's sentences stay out
        assert len(set(donors)) == len(donors) == 2  # one sentence from each other paper
    # the related paper's words come into the rewrite: its topic, in other papers' sentences
    rng = random.Random(0)
    written = " ".join(rewriter.sentence(rewriter.sentences[1][0], rng, {}, 0.9, topic=0) for _ in range(20))
    assert tx.content_words(written) & (
        tx.content_words(SEEDS[0].abstract) - tx.content_words(SEEDS[1].abstract)
    )


def _result(config, n, item, type_="factoid", hit=1.0, abstained=False, answered=True, first=None):
    return ItemResult(config, item, type_, "q", "q", ["p"], [], {"hit@5": hit}, {"first_token": first},
                      answered=answered, abstained=abstained, distractors=n)  # fmt: skip


def test_first_token_is_compared_item_by_item():
    # Two clusters of first-token times: one item moving up a cluster shifts the p50 of a run a lot;
    # the paired median ratio shows the typical item is barely slower.
    low = [4.0, 4.0, 4.1, 6.0, 6.0]
    high = [4.1, 4.1, 6.0, 6.1, 6.1]
    results = [_result("hybrid N=0", 0, str(i), first=t) for i, t in enumerate(low)]
    results += [_result("hybrid N=10000", 10000, str(i), first=t) for i, t in enumerate(high)]
    results.append(_result("hybrid N=10000", 10000, "refused", first=None))
    paired = paired_first_token(results, 0, 10000)
    assert paired["hybrid"]["items"] == 5
    assert statistics.median(high) / statistics.median(low) > 1.4  # the p50s: 46 % apart
    assert paired["hybrid"]["median_ratio"] == pytest.approx(4.1 / 4.0)


def test_the_report_names_the_items_lost_at_the_larger_index():
    results = [
        _result("hybrid N=0", 0, "a"),
        _result("hybrid N=0", 0, "b"),
        _result("hybrid N=0", 0, "u", "unanswerable", abstained=True),
        _result("hybrid N=1000", 1000, "a"),
        _result("hybrid N=1000", 1000, "b", hit=0.0),
        _result("hybrid N=1000", 1000, "u", "unanswerable", abstained=False),
    ]
    assert changed(results, 0, 1000) == {
        "lost_from_top5": ["hybrid: b"],
        "unanswerable_answered": ["hybrid: u"],
    }
    summary = {"configs": {"hybrid N=0": {"hit@5": 1.0}, "hybrid N=1000": {"hit@5": 0.5}},
               "distractors": scale_summary(results, {"max_cosine": 0.89})}  # fmt: skip
    text = "\n".join(section(summary))
    assert "| hybrid N=1000 | 0.500 |" in text and "hybrid: b" in text and "0.89" in text
    assert scale_summary([_result("hybrid", None, "a")], {}) is None
