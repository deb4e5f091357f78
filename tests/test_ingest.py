import json

import pytest

from rag.index.ingest import dedupe, ingest
from rag.index.readers import read_paths
from rag.index.store import StaleIndexError, Store
from tests.conftest import PAPERS, SEEDS, write_jsonl


def test_dedupe_merges_seed_repeats_and_keeps_all_sources():
    papers, merged = dedupe(read_paths([SEEDS]).papers)
    assert (len(papers), merged) == (53, 4)
    repeated = [p for p in papers if len(p.sources) > 1]
    assert len(repeated) == 4
    assert all(len({s.split("#")[0] for s in p.sources}) == 2 for p in repeated)


def test_ingest_then_reingest_embeds_nothing(store, embedder, corpus):
    first = ingest([corpus], store, embedder, chunk_tokens=60)
    assert (first.papers, first.papers_new, first.chunks_embedded > 0) == (3, 3, True)
    before = embedder.texts_embedded
    second = ingest([corpus], store, embedder, chunk_tokens=60)
    assert second.chunks_embedded == 0 and second.papers_unchanged == 3
    assert embedder.texts_embedded == before
    assert "up to date" in "\n".join(second.lines())
    assert store.stats()["papers"] == 3


def test_changed_paper_is_embedded_alone(store, embedder, corpus):
    ingest([corpus], store, embedder, chunk_tokens=60)
    rows = [dict(r) for r in PAPERS]
    rows[1]["abstract"] += " A new closing sentence was added."
    write_jsonl(corpus / "papers_a.jsonl", rows)
    summary = ingest([corpus], store, embedder, chunk_tokens=60)
    assert (summary.papers_changed, summary.papers_unchanged, summary.papers_new) == (1, 2, 0)
    stored = store.papers(["p-moe"])["p-moe"]
    assert stored.abstract.endswith("was added.")
    # old chunks of the changed paper are gone
    ids = store.collection.get(where={"paper_id": "p-moe"}, include=[])["ids"]
    hashes = {i.split("::")[1] for i in ids}
    assert len(hashes) == 1


def test_bad_file_does_not_lose_stored_papers(store, embedder, corpus):
    ingest([corpus], store, embedder, chunk_tokens=60)
    (corpus / "papers_a.jsonl").write_bytes(b"\x00\x00binary now")
    summary = ingest([corpus], store, embedder, chunk_tokens=60)
    assert summary.errors and "binary" in str(summary.errors[0])
    assert store.stats()["papers"] == 3


def test_paper_removed_from_a_reread_file_is_deleted(store, embedder, corpus):
    ingest([corpus], store, embedder, chunk_tokens=60)
    write_jsonl(corpus / "papers_a.jsonl", PAPERS[:2])
    summary = ingest([corpus], store, embedder, chunk_tokens=60)
    assert summary.papers_removed == 1
    assert sorted(store.papers(["p-entropy", "p-moe", "p-graph"])) == ["p-entropy", "p-moe"]


def test_same_paper_in_second_file_adds_a_source_without_embedding(store, embedder, corpus):
    ingest([corpus], store, embedder, chunk_tokens=60)
    write_jsonl(corpus / "papers_b.jsonl", [PAPERS[0]])
    summary = ingest([corpus], store, embedder, chunk_tokens=60)
    assert summary.chunks_embedded == 0 and summary.duplicates_merged == 1
    assert store.papers(["p-entropy"])["p-entropy"].sources == ["papers_a.jsonl#0", "papers_b.jsonl#0"]


def test_changed_settings_make_the_index_stale(tmp_path, store, embedder, corpus):
    ingest([corpus], store, embedder, chunk_tokens=60)
    other = Store(store.chroma_dir, fingerprint={"embedder": "other-model", "chunk_tokens": 60})
    with pytest.raises(StaleIndexError, match="--rebuild"):
        ingest([corpus], other, embedder, chunk_tokens=60)
    summary = ingest([corpus], other, embedder, chunk_tokens=60, rebuild=True)
    assert summary.papers_new == 3
    other.check_fingerprint()  # no longer stale
    assert other.stats() == {"papers": 3, "chunks": summary.chunks_embedded}


def test_keyword_index_follows_chroma(indexed, embedder, corpus):
    assert indexed.keyword_index().size == indexed.count()
    write_jsonl(
        corpus / "more.jsonl", [{"id": "p-new", "abstract": "Zebras sleep standing up. Quokkas smile."}]
    )
    ingest([corpus], indexed, embedder, chunk_tokens=60)
    hits = indexed.keyword_index().search("quokkas", 3)
    assert hits and hits[0][0].startswith("p-new::")
    assert indexed.keyword_index().size == indexed.count()


def test_chunk_metadata_keeps_offsets_and_title(indexed):
    got = indexed.collection.get(include=["metadatas", "documents"])
    for meta, doc in zip(got["metadatas"], got["documents"]):
        paper = indexed.papers([meta["paper_id"]])[meta["paper_id"]]
        assert doc.endswith(paper.abstract[meta["start"] : meta["end"]])
        assert meta["title"] == paper.title
        assert json.loads(meta["sources"]) == paper.sources


def test_ctrl_c_during_a_store_write_waits_for_the_write_to_finish():
    import os
    import signal

    from rag.index.chroma import uninterrupted

    before = signal.getsignal(signal.SIGINT)  # ignored when the suite itself runs in the background
    done = []
    with pytest.raises(KeyboardInterrupt):
        with uninterrupted():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("the write went on")  # not interrupted inside
    assert done == ["the write went on"]
    assert signal.getsignal(signal.SIGINT) is before  # the handler is back


def test_each_abstract_sentence_and_title_is_embedded_once(store, embedder, corpus):
    from collections import Counter

    from rag.text import sentence_spans

    papers, _ = dedupe(read_paths([corpus]).papers)
    summary = ingest([corpus], store, embedder, chunk_tokens=60)
    expected = Counter(p.abstract[s:e] for p in papers for s, e in sentence_spans(p.abstract))
    expected.update(p.title for p in papers if p.title)
    assert Counter(embedder.seen) == expected  # no chunk text embedded, nothing twice
    assert summary.chunks_embedded == store.stats()["chunks"] >= len(papers)  # stored, vectors derived
    assert summary.sentence_papers == len(papers)


def test_a_chunk_vector_is_its_sentences_and_its_title():
    import numpy as np

    from rag.index.chunking import TITLE_WEIGHT, chunk_text, chunk_vectors
    from rag.text import sentence_spans
    from tests.fakes import FakeEmbedder

    emb = FakeEmbedder()
    text = "Sparse coding of activations. Dictionaries found by training. Rivers flood the delta plains."
    spans = sentence_spans(text)
    matrix = np.array(emb.embed_batch([text[s:e] for s, e in spans]))
    chunks = chunk_text("p", text, max_tokens=16, overlap_sentences=0)
    assert len(chunks) >= 2
    plain = np.array(chunk_vectors(chunks, spans, matrix, None))
    assert np.allclose(np.linalg.norm(plain, axis=1), 1.0)
    # Each chunk's vector is nearest the sentences it holds.
    for chunk, vector in zip(chunks, plain):
        inside = [i for i, (s, e) in enumerate(spans) if s < chunk.end and e > chunk.start]
        assert int(np.argmax(matrix @ vector)) in inside
    title = np.array(emb.embed("Rivers"))
    titled = np.array(chunk_vectors(chunks, spans, matrix, title))
    assert (titled @ title > plain @ title).all() and TITLE_WEIGHT > 0


def test_keyword_index_reports_its_progress(indexed):
    seen = []
    index = indexed.keyword_index(progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (index.size, index.size) == (indexed.count(), indexed.count())
