"""The answer judge: it orders the evidence a prompt shows, refuses before the model writes when no
source sentence answers, and (the real path) the shipped weights prefer the sentence that answers
over true sentences of the same abstract that do not."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from rag.answer.trust import Trust
from rag.judge.answer import ANSWER, AnswerJudge, shown
from rag.judge.model import META_FILE, JudgeLoadError, PairModel
from rag.questions import parse
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


def test_no_answering_sentence_refuses_before_the_model_and_shows_the_nearest():
    nearest = (0.2, "SlimAttend cuts the peak memory of attention by 61%.", "SlimAttend")
    refusal = _trust().before_generation(parse("Which GPU did SlimAttend run on?"), 0.9, [], nearest)
    assert refusal is not None and refusal.code == "no_answering_sentence"
    assert "“SlimAttend cuts the peak memory" in refusal.reason and "SlimAttend" in refusal.reason
    answered = (0.8, nearest[1], nearest[2])
    assert _trust().before_generation(parse(QUESTION), 0.9, [], answered) is None
    assert _trust().before_generation(parse(QUESTION), 0.9, [], None) is None  # the judge did not read
    assert _trust(rule_on=False).before_generation(parse(QUESTION), 0.9, [], nearest) is None
    # A list of papers is answered by papers on the topic, not by one sentence.
    assert (
        _trust().before_generation(parse("Which papers study compressed caches?"), 0.9, [], nearest) is None
    )


def test_the_screen_reads_the_best_judged_sentence_of_the_evidence():
    def low(pairs):
        return np.array([0.3 if "61%" in text else 0.1 for _, text in pairs])

    evidence = _select(low, budget=400)
    refusal = _trust(threshold=0.5).screen(parse(QUESTION), _results(), evidence)
    assert refusal is not None and "61%" in refusal.reason
    assert _trust(threshold=0.25).screen(parse(QUESTION), _results(), evidence) is None


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


# ---- the `answered` stage (a fake judge: the sentence saying entropy declines answers)

ENTROPY = "How does knowledge entropy change during pretraining?"


def _declining(indexed, embedder, monkeypatch, draft, stages=None):
    from tests.conftest import make_pipeline

    extra = {"answer_stages": stages} if stages else {}
    pipeline, _ = make_pipeline(indexed, embedder, [draft], min_coverage=0.2, support_threshold=0.2,
                                evidence_judge=True, **extra)  # fmt: skip

    def answering(question):
        return lambda texts: np.array([0.9 if "entropy declines" in s else 0.05 for _, s in texts])

    monkeypatch.setattr(pipeline, "answering", answering)
    return pipeline


def test_a_draft_that_declines_with_the_answer_in_its_evidence_is_answered_by_a_quote(
    indexed, embedder, monkeypatch
):
    draft = "The papers do not state how knowledge entropy changes."
    answer = _declining(indexed, embedder, monkeypatch, draft).ask(ENTROPY)
    assert not answer.abstained, answer.abstain_reason
    assert "“Knowledge entropy declines steadily as pretraining advances”" in answer.text
    assert answer.citations and answer.citations[0].paper_id == "p-entropy"
    assert any(t.stage == "answered" and t.decision == "added" for t in answer.trace)
    # Without the stage the same draft is a refusal.
    stages = ["clean", "check", "verdict", "refuse", "complete", "wanted", "render"]
    assert _declining(indexed, embedder, monkeypatch, draft, stages).ask(ENTROPY).abstained


def test_an_answer_that_answers_gets_no_quote(indexed, embedder, monkeypatch):
    draft = "Knowledge entropy declines steadily while pretraining advances [1]."
    answer = _declining(indexed, embedder, monkeypatch, draft).ask(ENTROPY)
    assert not answer.abstained and "“" not in answer.text
    assert any(t.stage == "answered" and t.decision == "answered" for t in answer.trace)


def test_a_comparison_that_leaves_a_side_out_gets_that_sides_answering_sentence(
    indexed, embedder, monkeypatch
):
    from tests.conftest import make_pipeline

    question = "What do MoE Routers as Embeddings and Graph Transformers at Scale each report?"
    draft = "Routing weights serve as embeddings without finetuning [1]."
    # Asked in parts, one prompt each: the second part's draft declines.
    pipeline, _ = make_pipeline(indexed, embedder, [draft, "The sources do not say."], min_coverage=0.2,
                                support_threshold=0.2, evidence_judge=True)  # fmt: skip
    answers = ("10.5 percent", "100 million nodes")
    monkeypatch.setattr(pipeline, "answering", lambda q: lambda texts: np.array(
        [0.9 if any(a in s for a in answers) else 0.05 for _, s in texts]))  # fmt: skip
    answer = pipeline.ask(question)
    assert not answer.abstained, answer.abstain_reason
    assert "“It scales to graphs with 100 million nodes”" in answer.text
    assert {c.paper_id for c in answer.citations} == {"p-moe", "p-graph"}
    (added,) = [t for t in answer.trace if t.stage == "answered" and t.decision == "added"]
    assert "left out" in added.reason and "Graph Transformers" in added.reason


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


def test_the_real_judge_refuses_a_detail_no_source_gives_before_the_model_writes(indexed, embedder):
    from tests.conftest import make_pipeline

    pipeline, llm = make_pipeline(indexed, embedder, [], evidence_judge=True)
    answer = pipeline.ask("Which GPU trained the knowledge entropy model?")
    assert answer.abstained and answer.abstain_code == "no_answering_sentence" and not llm.prompts
    assert "The nearest, from “Knowledge Entropy Decay”" in answer.abstain_reason
    # The same pipeline answers what a sentence answers: the model is asked.
    pipeline, llm = make_pipeline(
        indexed, embedder, ["Knowledge entropy declines steadily [1]."], evidence_judge=True
    )
    answer = pipeline.ask("How does knowledge entropy change during pretraining?")
    assert not answer.abstained and llm.prompts
