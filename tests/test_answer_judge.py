"""The answer judge: it orders the evidence a prompt shows, refuses before the model writes when no
source sentence answers, and (the real path) the shipped weights prefer the sentence that answers
over true sentences of the same abstract that do not."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from rag.answer.trust import Screen, Trust
from rag.judge.answer import ANSWER, AnswerJudge, shown
from rag.judge.model import META_FILE, JudgeLoadError, PairModel
from rag.question import read as parse
from rag.search.evidence import select_evidence
from rag.settings import TrustSettings
from rag.text import content_words
from rag.text import sentences as text_sentences
from rag.types import Chunk, Paper, Passage, SearchResult
from tests.fakes import FakeEmbedder

ABSTRACT = (
    "Attention over long documents costs memory that grows with their length. "
    "We propose SlimAttend, which stores keys in a compressed cache. "
    "SlimAttend cuts the peak memory of attention by 61% on documents of 32K tokens. "
    "Code and models are released."
)
QUESTION = "By how much does SlimAttend reduce peak memory?"


def _results(abstract=ABSTRACT, title="SlimAttend: compressed caches for long documents"):
    paper = Paper(id="p-slim", abstract=abstract, title=title, sources=["f#1"])
    chunk = Chunk("p-slim", 0, abstract, 0, len(abstract))
    return [SearchResult(1, paper, 1.0, [Passage(chunk, paper, 1.0, 0.5)])]


def _select(answering, budget=30):
    emb = FakeEmbedder()
    return select_evidence(content_words(QUESTION), emb.embed(QUESTION), _results(), emb,
                           budget_tokens=budget, keep_within=10, answering=answering)  # fmt: skip


def test_the_judge_orders_the_sentences_a_tight_budget_keeps():
    # A judge that says only the third sentence answers: with room for one sentence it is the one.
    def third(pairs):
        return np.array([1.0 if "61%" in text else 0.0 for _, text in pairs])

    (ev,) = _select(third)
    assert [ev.sentences[i].text for i in ev.chosen] == [ev.sentences[2].text]
    assert ev.sentences[2].answers == 1.0 and ev.sentences[0].answers == 0.0

    def first(pairs):
        return np.array([1.0 if "grows" in text else 0.0 for _, text in pairs])

    (ev,) = _select(first)
    assert ev.chosen == [0]  # the order follows the judge, not the fit


def test_without_the_judge_the_evidence_is_as_before():
    (ev,) = _select(None)
    assert all(s.answers is None for s in ev.sentences)
    assert ev.sentences[ev.chosen[0]].rank == ev.sentences[ev.chosen[0]].score


def _trust(rule_on=True, threshold=0.5):
    rules = ["no_answering_sentence"] if rule_on else []
    return Trust(TrustSettings(rules=rules, answer_refuse=threshold))


def _signal(trust: Trust, question: str, best) -> bool:
    """Would `no_answering_sentence` fire? (a signal the selector reads; it refuses nothing itself)"""
    (rule,) = trust.refusal_rules or (None,)
    return rule is not None and rule.refuse(Screen(parse(question), 0.9, [], best)) is not None


def test_no_answering_sentence_fires_when_no_sentence_answers_and_names_the_nearest():
    nearest = (0.2, "SlimAttend cuts the peak memory of attention by 61%.", "SlimAttend")
    (rule,) = _trust().refusal_rules
    refusal = rule.refuse(Screen(parse("Which GPU did SlimAttend run on?"), 0.9, [], nearest))
    assert refusal is not None and refusal.code == "no_answering_sentence"
    assert "“SlimAttend cuts the peak memory" in refusal.reason and "SlimAttend" in refusal.reason
    answered = (0.8, nearest[1], nearest[2])
    assert not _signal(_trust(), QUESTION, answered)
    assert not _signal(_trust(), QUESTION, None)  # the judge did not read
    assert not _signal(_trust(rule_on=False), QUESTION, nearest)
    # A list of papers is answered by papers on the topic, not by one sentence.
    assert not _signal(_trust(), "Which papers study compressed caches?", nearest)


def test_the_screen_reads_the_best_judged_sentence_of_the_evidence():
    def low(pairs):
        return np.array([0.3 if "61%" in text else 0.1 for _, text in pairs])

    evidence = _select(low, budget=400)
    view = _trust().screen_view(parse(QUESTION), _results(), evidence)
    assert view.answering is not None and "61%" in view.answering[1] and view.answering[0] == 0.3
    (rule,) = _trust(threshold=0.5).refusal_rules
    assert rule.refuse(view) is not None
    (rule,) = _trust(threshold=0.25).refusal_rules
    assert rule.refuse(view) is None


def test_an_answer_judge_folder_must_hold_an_answer_judge(tmp_path):
    folder = tmp_path / "answer"
    shutil.copytree(ANSWER, folder)
    meta = json.loads((folder / META_FILE).read_text())
    (folder / META_FILE).write_text(json.dumps(meta | {"labels": ["supported", "contradicted", "unstated"]}))
    with pytest.raises(JudgeLoadError, match="not an answer judge"):
        AnswerJudge(folder)


def test_the_shipped_answer_judge_matches_its_sha256():
    PairModel(ANSWER).verify()


def test_the_shipped_answer_judge_prefers_the_sentence_that_answers():
    # Real weights: for each question the sentence that answers scores above every other true
    # sentence of the same abstract (written for this test, not from the training data).
    judge = AnswerJudge()
    title = "SlimAttend: compressed caches for long documents"
    sentences = text_sentences(ABSTRACT)
    asked = {QUESTION: 2, "What does SlimAttend store in its compressed cache?": 1}
    for question, answer in asked.items():
        scores = judge.scores(question, [(title, s) for s in sentences])
        assert int(np.argmax(scores)) == answer, (question, scores)
    assert shown(title, "x") == f"{title}. x"


def test_a_floor_keeps_sentences_the_judge_finds_no_answer_out_of_the_prompt():
    def third(pairs):
        return np.array(
            [0.9 if "61%" in text else (0.3 if "compressed cache" in text else 0.01) for _, text in pairs]
        )

    emb = FakeEmbedder()
    (ev,) = select_evidence(content_words(QUESTION), emb.embed(QUESTION), _results(), emb,
                            budget_tokens=400, keep_within=10, answering=third, floor=0.2)  # fmt: skip
    assert [ev.sentences[i].text for i in ev.chosen] == [ev.sentences[1].text, ev.sentences[2].text]
    (ev,) = _select(third, budget=400)
    assert len(ev.chosen) == len(ev.sentences)  # no floor: the budget alone decides


def test_the_real_judge_and_selector_refuse_a_detail_no_source_gives(indexed, embedder):
    from tests.conftest import make_pipeline

    shipped = {"threshold": None}  # the selector as it ships
    draft = "The knowledge entropy model was trained on NVIDIA A100 GPUs [1]."
    pipeline, llm = make_pipeline(indexed, embedder, [draft], evidence_judge=True, select=shipped)
    answer = pipeline.ask("Which GPU trained the knowledge entropy model?")
    assert answer.selected["features"]["rule_no_answering_sentence"] == 1.0  # a signal, no refusal of its own
    assert answer.abstained and answer.abstain_code == "selected_refusal" and llm.prompts
    assert "The nearest, from “Knowledge Entropy Decay”" in answer.abstain_reason
    # The same pipeline answers what a sentence answers.
    pipeline, llm = make_pipeline(
        indexed, embedder, ["Knowledge entropy declines steadily [1]."], evidence_judge=True, select=shipped
    )
    answer = pipeline.ask("How does knowledge entropy change during pretraining?")
    assert not answer.abstained and llm.prompts
