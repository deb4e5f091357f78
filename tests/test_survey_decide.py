"""The survey list's one decision (rag/search/decide.py): its features, its weights as shipped, and
the model's reading of a question the reader was unsure of (rag/question/rewrite.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rag.question import read as parse
from rag.question.rewrite import GRAMMAR, Rewrite, messages, parse_reply, rewritten, unsure
from rag.search.decide import FEATURES, Decider, Signals, features, mentions, names_of, shipped_decider
from rag.types import Paper

ABSTRACT = (
    "We study time series forecasting. "
    "Our model uses a sparse mixture-of-experts (MoE) design to scale. "
    "Each MoE layer routes tokens to two experts."
)


def paper(title: str = "MoE for forecasting at scale", abstract: str = ABSTRACT) -> Paper:
    return Paper(id="p1", title=title, abstract=abstract)


def names():
    return names_of(["mixture of experts"], [], ["sparse models"], ["MoE"])


def test_mentions_count_the_topic_its_acronym_and_its_alternatives():
    topic, also, acronyms = mentions(ABSTRACT, names())
    assert acronyms == 1  # "(MoE)" and "MoE": one written form
    assert topic == 2  # the phrase once (mixture-of-experts), the acronym
    assert also == 0
    # An acronym alone is counted as written, not as stems: "moe" in lower case is no mention.
    assert mentions("a moe of text", names_of(["MoE"], [], [], []))[0] == 0


def test_features_say_where_and_how_the_topic_is_named():
    s = Signals({"topic", "dense"}, p=0.9, cosine=0.6, dense_rank=3)
    x = features(paper(), names(), s, list_size=20, confidence=0.8, dense_depth=60)
    assert set(x) == set(FEATURES)
    assert x["by_topic"] == x["by_dense"] == 1.0 and x["by_alias"] == 0.0 and x["only_dense"] == 0.0
    assert x["title_topic"] == 1.0  # the title names the acronym
    assert x["first_mention"] == pytest.approx(1 / 3)  # the second of three sentences
    assert x["mention_sentences"] == pytest.approx(2 / 3)
    assert x["dense_rank"] == pytest.approx(3 / 60) and x["judge_logit"] > 2
    assert x["reader_confidence"] == 0.8


def test_a_paper_dense_search_alone_offered_and_that_never_names_the_topic():
    s = Signals({"dense"}, p=0.2, cosine=0.3, dense_rank=None)
    x = features(paper("Forecasting", "We forecast weather. It works."), names(), s, 5, 1.0, 60)
    assert x["only_dense"] == 1.0 and x["mentions_topic"] == 0.0 and x["title_any"] == 0.0
    assert x["first_mention"] == 1.5 and x["dense_rank"] == 1.5  # not found: beyond every position
    # Named only by its acronym: the long form never appears.
    y = features(paper("Routing", "Each MoE layer routes tokens."), names(), s, 5, 1.0, 60)
    assert y["acronym_only"] == 1.0


def test_the_decision_is_monotone_in_its_weights_and_rejects_unknown_features():
    d = Decider(FEATURES, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES),
                tuple(1.0 if f == "judge_logit" else 0.0 for f in FEATURES), 0.0, 0.5)  # fmt: skip
    x = dict.fromkeys(FEATURES, 0.0)
    assert d.p(x | {"judge_logit": 2.0}) > d.p(x) > d.p(x | {"judge_logit": -2.0})
    assert d.keeps(x | {"judge_logit": 2.0}) and not d.keeps(x | {"judge_logit": -2.0})
    with pytest.raises(ValueError, match="unknown features"):
        Decider.from_json(d.to_json() | {"names": [*FEATURES[:-1], "words_in_moon"]})


def test_the_shipped_decision_loads_with_its_threshold():
    d = shipped_decider()
    assert d is not None and d.names == FEATURES and 0.0 < d.threshold < 1.0
    # What it learned reads as sense: the judge's p and the topic's own words count for a paper.
    coef = dict(zip(d.names, d.coef))
    assert coef["judge_logit"] > 0 and coef["by_topic"] > 0 and coef["only_dense"] < 0


def test_the_model_reading_is_json_under_a_grammar():
    assert "root ::=" in GRAMMAR and messages("PINNs?")[-1] == {"role": "user", "content": "PINNs?"}
    good = parse_reply(
        json.dumps({"topic": "PINNs", "aliases": ["physics-informed neural networks", "PINNs"]}), "q?"
    )
    assert good == Rewrite("PINNs", ("physics-informed neural networks",))
    assert parse_reply(json.dumps({"list": False, "topic": "", "aliases": []}), "q?") == Rewrite(
        "", (), False
    )
    assert parse_reply("not json", "q?") is None
    assert parse_reply(json.dumps({"topic": " ", "aliases": []}), "q?") is None


def test_only_an_unsure_list_question_is_read_again():
    listing = replace(parse("Which papers study graph neural networks?"), topic="GNNs", topic_confidence=0.9)
    assert not unsure(listing, 0.4)
    assert unsure(replace(listing, topic_confidence=0.3), 0.4)
    assert unsure(replace(listing, topic=""), 0.4)
    fact = parse("How many time points are in Time-300B?")
    assert not unsure(fact, 0.4)  # no reader: nothing to be unsure of
    # Read as no list, but not surely: the model says whether it asks for a list.
    assert unsure(replace(fact, listing_p=0.3), 0.4, 0.1) and not unsure(
        replace(fact, listing_p=0.05), 0.4, 0.1
    )
    new = rewritten(replace(listing, also=("graph networks",)), Rewrite("GNNs", ("graph neural networks",)))
    assert new.topic == "GNNs" and new.also == ("graph neural networks", "graph networks")
    # Parsed again as a list question with the model's reading: its status words become filters.
    terse = replace(parse("MCMC: what's out there among the orals?"), listing_p=0.2)
    again = rewritten(terse, Rewrite("MCMC", ("Markov chain Monte Carlo",)))
    assert again.asks_for_papers and again.topic == "MCMC" and again.filters.get("status")


def test_a_reading_whose_topic_is_only_the_filter_is_not_used():
    from rag.question.rewrite import _only_filter_words

    asked = parse("In the physical-sciences applications area, which papers generate new molecules?")
    assert _only_filter_words(replace(asked, topic="physical-sciences applications area"))
    assert not _only_filter_words(replace(asked, topic="molecule generation"))


class _Model:
    """A model that replies what it is given (the logic around the reply, not the model, is tested)."""

    def __init__(self, reply: str):
        self.reply = reply

    def complete(self, messages, **kwargs) -> str:
        assert kwargs.get("grammar") == GRAMMAR
        return self.reply


def test_reading_again_keeps_the_filters_and_refuses_a_filter_read_as_the_topic():
    from rag.question.rewrite import reread

    asked = replace(
        parse(
            "Within probabilistic methods, which submissions separate aleatoric and epistemic uncertainty?"
        ),
        topic_confidence=0.0,
    )
    reply = lambda topic: json.dumps({"list": True, "topic": topic, "aliases": []})  # noqa: E731
    kept, step = reread(asked, lambda: _Model(reply("probabilistic methods")))
    assert kept is asked and step.decision == "kept the reader's reading" and "filter" in step.reason
    new, step = reread(asked, lambda: _Model(reply("aleatoric and epistemic uncertainty")))
    assert step.decision == "rewritten" and new.topic == "aleatoric and epistemic uncertainty"
    assert new.filters == asked.filters  # the area the reader's parse read stays
    same, step = reread(asked, lambda: _Model(json.dumps({"list": False, "topic": "", "aliases": []})))
    assert same is asked and "no list" in step.reason


def test_papers_described_by_two_predicates_are_not_read_again():
    # The reader is sure it names no topic ("Which papers do X or Y?"): each predicate is searched.
    described = replace(
        parse("Which papers optimize formal proofs or synthesize camera views?"), listing_p=0.06
    )
    assert described.asks_for_papers and described.alternatives
    assert not unsure(described, 0.4, 0.1)
