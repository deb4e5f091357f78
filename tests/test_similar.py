"""Papers like this one: nearest by meaning, the paper itself left out, each with its nearest sentence."""

import pytest

from rag.index.ingest import ingest
from rag.index.store import StoreError
from rag.search.similar import similar
from tests.conftest import PAPERS, write_jsonl

NEAR = [
    {
        "id": "p-entropy-2",
        "title": "Entropy of Knowledge in Pretraining",
        "abstract": "Knowledge entropy of language models changes during pretraining. We measure knowledge "
        "entropy decline and its effect on retention. Unrelated closing words about gardens.",
    },
]


@pytest.fixture
def more(tmp_path, store, embedder):
    folder = tmp_path / "more"
    folder.mkdir()
    write_jsonl(folder / "p.jsonl", PAPERS + NEAR)
    ingest([folder], store, embedder, chunk_tokens=60)
    return store


def test_the_nearest_paper_comes_first_with_its_nearest_sentence(more, embedder):
    paper, found = similar(more, embedder, None, "p-entropy", k=3)
    assert paper.id == "p-entropy"
    assert [s.paper.id for s in found][0] == "p-entropy-2"
    assert "p-entropy" not in {s.paper.id for s in found}
    assert found[0].sentence in NEAR[0]["abstract"] and "gardens" not in found[0].sentence
    assert [s.similarity for s in found] == sorted((s.similarity for s in found), reverse=True)
    assert found[0].to_json()["paper_id"] == "p-entropy-2"


def test_an_unknown_id_is_a_clear_error(more, embedder):
    with pytest.raises(StoreError, match="No paper with id 'nope'"):
        similar(more, embedder, None, "nope")
