"""The seeds indexed with the real embedder and a real Chroma on disk."""

import pytest

from rag.answer.pipeline import Pipeline
from rag.index.embedding import embedder_from_settings
from rag.index.ingest import ingest
from rag.index.store import store_from_settings
from tests.conftest import SEEDS

# Paraphrased questions (little word overlap with titles) -> the paper that answers them.
PARAPHRASES = [
    ("Why do language models get worse at absorbing new facts as pretraining goes on?", "eHehzSDUFp"),
    ("Can the gating weights of sparse expert models double as sentence representations?", "eFGQ97z5Cd"),
    (
        "Forecasting with a billion-parameter sparse expert model trained on 300 billion time points",
        "e1wDDFmlVu",
    ),
    ("Compressing LLM weights below one bit per parameter", "6XUSDvBFkV"),
    (
        "Replacing softmax attention with a linear approximation, then fixing it with low-rank adapters",
        "8VtGeyJyx9",
    ),
    ("Dataset of bird sound recordings for benchmarking audio classifiers", "dRXxFEY8ZE"),
    ("Zeroing small hidden-state activations without retraining to decode faster", "dGVZwyq5tV"),
    ("Keeping a million tokens of context by cascading key-value cache buffers", "dSneEp59yX"),
    (
        "Teaching a chatbot to ask what the user meant by simulating the next turns of the dialogue",
        "cwuSAR7EKd",
    ),
    ("Generating crystal structures of porous metal-organic materials with flow matching", "dNT3abOsLo"),
    ("Making a model forget copyrighted or private facts at large scale", "dXCpPgjTtd"),
    ("Training reward models that are not fooled by response length or format artifacts", "88AS5MQnmC"),
]


@pytest.fixture(scope="module")
def pipeline(seed_settings):
    return Pipeline(seed_settings)


def test_seed_index_counts_and_reingest_embeds_nothing(seed_settings):
    embedder = embedder_from_settings(seed_settings)
    store = store_from_settings(seed_settings, embedder)
    assert store.stats()["papers"] == 53
    again = ingest(
        [SEEDS],
        store,
        embedder,
        chunk_tokens=seed_settings.chunk_tokens,
    )
    assert (again.papers, again.duplicates_merged, again.chunks_embedded) == (53, 4, 0)
    assert store.keyword_index().size == store.count()


def test_every_long_abstract_is_chunked_within_the_window(seed_settings):
    embedder = embedder_from_settings(seed_settings)
    store = store_from_settings(seed_settings, embedder)
    docs = store.collection.get(include=["documents"])["documents"]
    assert max(embedder.count_tokens(d) for d in docs) <= embedder.window - 2
    assert len(docs) > 53  # some abstracts needed more than one chunk


def test_paraphrased_questions_find_the_right_paper_first(pipeline):
    misses = []
    for question, paper_id in PARAPHRASES:
        top = pipeline.search(question, 5)
        if top[0].paper.id != paper_id:
            misses.append((question, [r.paper.id for r in top]))
    assert len(PARAPHRASES) - len(misses) >= 10, misses
