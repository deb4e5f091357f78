"""Sentence vectors kept beside the index, and the ranking of papers by their best sentences."""

import numpy as np

from rag.index.sentence_vectors import SentenceVectors
from rag.search.evidence import embedded_sentences
from rag.search.retrieve import rerank_by_sentences
from rag.text import sentence_spans
from rag.types import Paper, SearchResult
from tests.fakes import FakeEmbedder

PAPER = Paper(
    "p1", "Sparse training resists noise. Dense models do not. We test on corrupted images.", title="T"
)


def test_kept_vectors_are_read_back_instead_of_embedded_again(tmp_path):
    emb = FakeEmbedder()
    first = SentenceVectors(tmp_path / "v.sqlite", emb.model_id).vectors([PAPER], emb.embed_batch)[0]
    assert first.shape[0] == len(sentence_spans(PAPER.abstract)) == 3
    calls = emb.calls
    again = SentenceVectors(tmp_path / "v.sqlite", emb.model_id).vectors([PAPER], emb.embed_batch)[0]
    assert emb.calls == calls  # read from the file, not embedded
    assert np.array_equal(first, again)  # the same numbers fresh or kept: rankings do not change
    # another embedder's vectors are not reused
    SentenceVectors(tmp_path / "v.sqlite", "other-model").vectors([PAPER], emb.embed_batch)
    assert emb.calls == calls + 1


def test_a_changed_abstract_is_embedded_anew(tmp_path):
    emb = FakeEmbedder()
    kept = SentenceVectors(tmp_path / "v.sqlite", emb.model_id)
    kept.vectors([PAPER], emb.embed_batch)
    changed = Paper("p1", PAPER.abstract + " A fourth sentence.", title="T")
    rows = embedded_sentences([changed], emb, kept)[0]
    assert [s.text for s in rows][-1] == "A fourth sentence."
    assert len(rows) == 4 and all(s.vector.shape == (emb.dims,) for s in rows)


def test_only_what_is_missing_is_embedded(tmp_path):
    emb = FakeEmbedder()
    kept = SentenceVectors(tmp_path / "v.sqlite", emb.model_id)
    other = Paper("p2", "Another abstract. With two sentences.")
    kept.vectors([PAPER], emb.embed_batch)
    assert kept.embedded == 1
    kept.vectors([PAPER, other], emb.embed_batch)
    assert kept.embedded == 2
    again = SentenceVectors(tmp_path / "v.sqlite", emb.model_id)  # read back from disk
    again.vectors([PAPER, other], emb.embed_batch)
    assert again.embedded == 0


def test_an_unopenable_file_keeps_vectors_in_memory(tmp_path):
    (tmp_path / "v.sqlite").mkdir()  # a folder where the file should be: sqlite cannot open it
    emb = FakeEmbedder()
    kept = SentenceVectors(tmp_path / "v.sqlite", emb.model_id)
    kept.vectors([PAPER], emb.embed_batch)
    calls = emb.calls
    assert kept.vectors([PAPER], emb.embed_batch)[0].shape[0] == 3
    assert emb.calls == calls


def _ranked(papers):
    return [SearchResult(i, p, 1.0 / i, []) for i, p in enumerate(papers, 1)]


def test_a_paper_about_the_question_throughout_outranks_one_close_sentence():
    emb = FakeEmbedder()
    question = "sparse training robustness to image corruption"
    # One sentence of `once` is nearly the question; `about` says it three ways.
    once = Paper("once", "Sparse training robustness to image corruption. Cooking recipes. Weather in May.")
    about = Paper(
        "about",
        "Sparse training improves robustness. Image corruption hurts dense training less than sparse. "
        "We measure robustness of sparse training under corruption.",
    )
    ranked = rerank_by_sentences(
        question, emb.embed(question), _ranked([once, about]), lambda ps: embedded_sentences(ps, emb)
    )
    assert [r.paper.id for r in ranked] == ["about", "once"]
    assert [r.rank for r in ranked] == [1, 2]


def test_a_paper_that_names_the_asked_method_stays_first():
    emb = FakeEmbedder()
    question = "What does Time-MoE forecast?"
    plain = Paper("plain", "What does the model forecast? Forecast of time series. Forecast models.")
    named = Paper("named", "Time-MoE is a mixture of experts.")
    ranked = rerank_by_sentences(
        question,
        emb.embed(question),
        _ranked([plain, named]),
        lambda ps: embedded_sentences(ps, emb),
        ["Time-MoE"],
    )
    assert ranked[0].paper.id == "named"
    # without the name, the sentences decide
    unnamed = rerank_by_sentences(
        question, emb.embed(question), _ranked([named, plain]), lambda ps: embedded_sentences(ps, emb)
    )
    assert unnamed[0].paper.id == "plain"


def test_a_query_that_gives_a_title_finds_that_paper_first():
    emb = FakeEmbedder()
    query = "Compositional learning diagrams for parameterized models"
    # The titled paper's sentences echo the query less than another paper's do.
    titled = Paper("titled", "We draw training setups as pictures.", title="Learning diagrams")
    echo = Paper("echo", "Compositional learning of parameterized models with diagrams.", title="Echoes")
    short = Paper("short", "Unrelated words here.", title="Diagrams")  # one title word: not a title match
    ranked = rerank_by_sentences(
        query, emb.embed(query), _ranked([echo, short, titled]), lambda ps: embedded_sentences(ps, emb)
    )
    assert [r.paper.id for r in ranked][:2] == ["titled", "echo"]
    without = rerank_by_sentences(
        "compositional parameterized models", emb.embed("compositional parameterized models"),
        _ranked([titled, echo]), lambda ps: embedded_sentences(ps, emb),
    )  # fmt: skip
    assert without[0].paper.id == "echo"  # the title's words are not all there: the sentences decide


def test_ingest_embeds_every_papers_sentences_once(tmp_path, store, embedder, corpus):
    from rag.index.ingest import ingest

    kept = SentenceVectors(tmp_path / "v.sqlite", embedder.model_id)
    first = ingest([corpus], store, embedder, chunk_tokens=60, sentences=kept)
    assert first.sentence_papers == first.papers > 0
    assert any("sentences embedded" in line for line in first.lines())
    again = ingest([corpus], store, embedder, chunk_tokens=60, sentences=kept)
    assert again.sentence_papers == 0


def test_search_reranks_the_fused_ranking_by_sentences(indexed, embedder):
    from rag.search.retrieve import search

    seen = []

    def sentences_of(papers):
        seen.append(len(papers))
        return embedded_sentences(papers, embedder)

    results = search("sparse", indexed, embedder, k=2, rerank_papers=40, sentences_of=sentences_of)
    assert seen and seen[0] > 2  # read more papers than it returns
    assert len(results) == 2 and [r.rank for r in results] == [1, 2]
    search("sparse", indexed, embedder, k=2, rerank_papers=0, sentences_of=sentences_of)
    assert len(seen) == 1  # off: not read
