"""The embedder chosen for `RAG_EMBED_BACKEND=auto` is measured once and kept beside the ONNX files."""

import json

from rag.index.embedding import choice

RECORD = {
    "backend": "onnx",
    "batch_size": {"onnx": 16, "onnx-int8": 8},
    "texts_per_s": {"onnx": 9.0, "onnx-int8": 5.0},
}


def test_measured_once_then_read_back(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(choice, "measure", lambda folder, threads: calls.append(threads) or dict(RECORD))
    assert choice.chosen(tmp_path, threads=2)["backend"] == "onnx"
    assert choice.chosen(tmp_path, threads=2) == RECORD
    assert calls == [2]
    assert json.loads((tmp_path / choice.CHOICE).read_text()) == RECORD


def test_an_unreadable_record_is_measured_again(tmp_path, monkeypatch):
    (tmp_path / choice.CHOICE).write_text("{not json")
    monkeypatch.setattr(choice, "measure", lambda folder, threads: dict(RECORD))
    assert choice.chosen(tmp_path, threads=2) == RECORD


def test_a_read_only_folder_still_gets_a_choice(tmp_path, monkeypatch):
    monkeypatch.setattr(choice, "measure", lambda folder, threads: dict(RECORD))
    assert choice.chosen(tmp_path / "missing", threads=2)["backend"] == "onnx"  # cannot be written
