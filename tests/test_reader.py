"""The question reader (rag/question/reader.py) with its shipped weights, and a question's kind and
topic as `parse` takes them from it. The phrasings here are not in the held-out sets."""

from __future__ import annotations

import json
import shutil

import pytest

from rag.judge.model import JudgeLoadError
from rag.question import Kind, parse
from rag.question.reader import READER, Reader, _balanced, _spans, question_reader


@pytest.fixture(scope="module")
def reader():
    return question_reader()


@pytest.mark.parametrize(
    "question",
    [
        "Which papers study grokking?",
        "What work looks at grokking, i.e. delayed generalization after overfitting?",
        "Is there any work on model editing?",
        "papers on data augmentation for time series",
        "How many submissions tackle symbolic regression?",
    ],
)
def test_a_list_question_is_a_list_however_it_is_worded(reader, question):
    assert parse(question, reader=reader).kind is Kind.SEVERAL_PAPERS


@pytest.mark.parametrize(
    "question",
    [
        "Which paper introduces the SWE-bench benchmark?",
        "What accuracy does DINOv2 reach on ImageNet?",
        "How many parameters does the largest model have?",
    ],
)
def test_a_question_about_one_paper_is_not_a_list(reader, question):
    assert parse(question, reader=reader).kind is not Kind.SEVERAL_PAPERS


def test_the_topic_is_kept_whole_and_the_verbs_stay_out(reader):
    intent = parse("Which papers propose or evaluate watermarks for LLM-generated text?", reader=reader)
    assert intent.topic == "watermarks for LLM-generated text"
    assert parse("Which papers study model editing?", reader=reader).topic == "model editing"


def test_a_gloss_is_an_alternative_not_the_topic(reader):
    intent = parse(
        "What work looks at grokking, i.e. delayed generalization after overfitting?", reader=reader
    )
    assert intent.topic == "grokking"
    assert any("delayed generalization" in a for a in intent.also)


def test_status_words_are_filters_not_topic(reader):
    intent = parse("Which rejected submissions study federated learning?", reader=reader)
    assert intent.topic == "federated learning" and intent.filters["status"] == ("submitted",)


def test_pieces_of_one_label_join_into_one_span():
    question = "papers on knowledge graphs with LLMs"
    # word pieces: papers on knowledge graphs with ll ##ms, the model saying B at "ll"
    offsets = [(0, 0), (0, 6), (7, 9), (10, 19), (20, 26), (27, 31), (32, 34), (34, 36), (0, 0)]
    words = [None, 0, 1, 2, 3, 4, 5, 5, None]
    tags = [0, 0, 0, 1, 2, 2, 1, 2, 0]  # O O O B I I B I O
    assert _spans(question, tags, offsets, words) == [("TOPIC", "knowledge graphs with LLMs")]


def test_weights_that_do_not_match_their_sha_are_refused(tmp_path):
    folder = tmp_path / "reader"
    shutil.copytree(READER, folder)
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps(meta | {"sha256": "0" * 64}))
    with pytest.raises(JudgeLoadError, match="sha256"):
        Reader(folder).read("Which papers study grokking?")


def test_a_folder_of_another_judge_is_refused():
    with pytest.raises(JudgeLoadError, match="not a question reader"):
        Reader(READER.parent / "answer")


def test_the_shipped_membership_judge_reads_a_paper_about_the_topic_above_one_that_is_not():
    from rag.judge.answer import ABOUT, about_judge
    from rag.judge.model import sha256

    judge = about_judge()
    assert sha256(ABOUT / "model-int8.onnx") == judge.model.meta.sha256
    about, other = judge.scores(
        "Which papers study model merging?",
        [
            (
                "Model Merging by Task Arithmetic",
                "We merge the weights of fine-tuned models into one model without training.",
            ),
            ("Fast Protein Folding", "We predict protein structures from sequences with a diffusion model."),
        ],
    )
    assert about > 0.5 > other


@pytest.mark.parametrize(
    "question,span,name",
    [
        ("Which orals address hallucination in LLMs?", "hallucination in", "hallucination"),
        ("Papers on theorem proving or autoformalization?", "theorem proving or", "theorem proving"),
        (
            "Which papers study LoRA (low-rank adaptation)?",
            "LoRA (low-rank adaptation",
            "LoRA (low-rank adaptation)",
        ),
        ("Work on the lottery ticket hypothesis", "lottery ticket hypothesis", "lottery ticket hypothesis"),
    ],
)
def test_a_read_name_never_ends_on_a_joining_word(question, span, name):
    at = question.index(span)
    assert _balanced(question, at, at + len(span)) == name
