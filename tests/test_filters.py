"""Filters by venue, year, status and area on every side of retrieval, and exports with references."""

from __future__ import annotations

import random

import pytest

from rag import filters as flt
from rag.index.ingest import ingest
from rag.search.retrieve import search
from tests.conftest import write_jsonl

VENUES = ["ICLR 2025", "ICLR 2024", "NeurIPS 2024", "arXiv"]
STATUSES = ["oral", "spotlight", "poster", ""]
TOPICS = ["sparse attention", "graph transformers", "protein design", "speech recognition", "reward models",
          "diffusion sampling", "time series forecasting", "machine unlearning"]  # fmt: skip
AREAS = ["optimization", "applications to computer vision, audio, language, and other modalities",
         "reinforcement learning"]  # fmt: skip


@pytest.fixture
def catalogue(tmp_path, store, embedder):
    rng = random.Random(7)
    rows = []
    for i in range(120):
        venue = rng.choice(VENUES)
        topic = rng.choice(TOPICS)
        rows.append({
            "id": f"c{i:03d}", "title": f"{topic.title()} study {i}",
            "abstract": f"We study {topic} with method M{i}. Results on {topic} benchmarks improve by {i % 17} points.",
            "venue": venue, "year": int(venue[-4:]) if venue[-1].isdigit() else 2023,
            "status": rng.choice(STATUSES), "primary_area": rng.choice(AREAS),
        })  # fmt: skip
    folder = tmp_path / "catalogue"
    folder.mkdir()
    write_jsonl(folder / "c.jsonl", rows)
    ingest([folder], store, embedder, chunk_tokens=60)
    return store, {r["id"]: r for r in rows}


def test_parse_and_describe():
    filters = flt.parse(["venue=ICLR  2025", "status=Oral", "status=spotlight", "year=2025"])
    assert filters == {"venue": ("iclr 2025",), "status": ("oral", "spotlight"), "year": ("2025",)}
    assert flt.describe(filters) == "status: oral or spotlight; venue: iclr 2025; year: 2025"
    for bad in ("venue", "colour=red", "year="):
        with pytest.raises(flt.FilterError):
            flt.parse([bad])
    assert flt.from_mapping({"status": ["oral", ""], "venue": None, "year": "2024"}) == {
        "status": ("oral",), "year": ("2024",)}  # fmt: skip


@pytest.mark.parametrize("mode", ["rrf", "dense", "bm25"])
def test_every_result_of_a_filtered_search_matches_the_filter(catalogue, embedder, mode):
    store, rows = catalogue
    rng = random.Random(mode)
    checked = 0
    for _ in range(40):
        choice = {
            "venue": rng.sample(VENUES, rng.randint(1, 2)),
            "status": rng.sample(STATUSES[:3], rng.randint(0, 2)),
            "area": rng.sample(AREAS, rng.randint(0, 1)),
        }
        filters = flt.from_mapping(choice)
        query = f"{rng.choice(TOPICS)} method M{rng.randint(0, 119)} benchmarks"
        for r in search(query, store, embedder, k=8, mode=mode, filters=filters):
            row = rows[r.paper.id]
            assert row["venue"].lower() in filters["venue"]
            assert "status" not in filters or row["status"] in filters["status"]
            assert "area" not in filters or row["primary_area"] in filters["area"]
            checked += 1
    assert checked > 100  # the filters leave results to check


def test_a_filter_that_matches_nothing_returns_nothing(catalogue, embedder):
    store, _ = catalogue
    assert search("sparse attention", store, embedder, k=5, filters=flt.parse(["venue=ICML 1999"])) == []


def test_facets_list_the_values_present(catalogue):
    store, rows = catalogue
    facets = store.facets()
    assert set(facets["venue"]) == {v.lower() for v in VENUES}
    assert set(facets["status"]) == {"oral", "spotlight", "poster"}
    assert "2025" in facets["year"]
    assert set(facets["area"]) == set(AREAS)


def test_an_area_said_in_words_is_every_stored_area_it_names(catalogue):
    store, _ = catalogue
    assert store.resolve({"area": ("computer vision",)}) == {"area": (AREAS[1],)}
    assert store.resolve({"area": ("optimization",), "status": ("oral",)}) == {
        "area": ("optimization",), "status": ("oral",)}  # fmt: skip
    assert store.resolve({"area": ("astrology",)}) == {"area": ("astrology",)}  # keeps everything out


def test_an_index_from_before_filters_is_upgraded_in_place(tmp_path, store, embedder, catalogue):
    """A version-1 index (no filter fields) still answers; filtering asks for one ingest, which adds
    the fields without re-embedding."""
    from rag.index.store import StoreError

    store, rows = catalogue
    col = store.collection
    got = col.get(include=["metadatas"])
    col.update(
        ids=got["ids"],
        metadatas=[{k: v for k, v in m.items() if not k.startswith("f_")} for m in got["metadatas"]],
    )
    meta = {k: v for k, v in col.metadata.items() if not k.startswith("hnsw:")}
    col.modify(metadata={**meta, "schema": 1})
    store._invalidate()
    assert search("sparse attention", store, embedder, k=3)  # still searchable
    with pytest.raises(StoreError, match="citewise ingest"):
        search("sparse attention", store, embedder, k=3, filters=flt.parse(["status=oral"]))
    before = embedder.texts_embedded
    folder = tmp_path / "catalogue"
    ingest([folder], store, embedder, chunk_tokens=60)
    assert embedder.texts_embedded == before  # nothing re-embedded
    results = search("sparse attention", store, embedder, k=5, filters=flt.parse(["status=oral"]))
    assert results and all(rows[r.paper.id]["status"] == "oral" for r in results)


def test_markdown_lists_every_cited_paper_once_and_bibtex_parses_back(indexed, embedder):
    import bibtexparser

    from rag.export import markdown, papers_bibtex
    from tests.conftest import make_pipeline

    reply = ("Knowledge entropy declines steadily as pretraining advances [1]. Lower entropy impairs "
             "knowledge acquisition [1]. Routing weights serve as embeddings [2].")  # fmt: skip
    # Every paper near the best sentence is a source: this question is about two papers, which the
    # one-paper rule (on by default) does not recognize, and this test is about exporting them.
    pipeline, _ = make_pipeline(indexed, embedder, [reply], one_paper_within=0.0)
    answer = pipeline.ask(
        "How does knowledge entropy change in pretraining, and do routing weights serve as embeddings?"
    )
    assert not answer.abstained and len({c.paper_id for c in answer.citations}) == 2
    text = markdown(answer)
    assert text.startswith("**Q:** How does knowledge entropy change")
    refs = text.split("**References**")[1].strip().splitlines()
    assert len(refs) == 2 and refs[0].startswith("[1] Knowledge Entropy Decay.")
    assert "<https://example.org/entropy>" in refs[0]
    library = bibtexparser.parse_string(papers_bibtex([answer, answer]))  # a conversation citing them twice
    assert not library.failed_blocks and len(library.entries) == 2
    titles = {e["title"].strip("{}") for e in library.entries}
    assert titles == {"Knowledge Entropy Decay", "MoE Routers as Embeddings"}
    assert len({e.key for e in library.entries}) == 2


def test_bibtex_escapes_what_would_break_an_entry():
    import bibtexparser

    from rag.export import bibtex, bibtex_key
    from rag.types import Paper

    paper = Paper("x1", "a", title="100% {Braces} & Co_op", authors=["José Núñez", "B. Smith"], venue="ICLR 2025",
                  year=2025, status="oral", url="https://openreview.net/forum?id=x1")  # fmt: skip
    entry = bibtexparser.parse_string(bibtex([paper])).entries[0]
    assert (
        entry.entry_type == "inproceedings" and entry["booktitle"] == "ICLR 2025" and entry["year"] == "2025"
    )
    assert entry["author"] == "José Núñez and B. Smith"
    assert entry.key == bibtex_key(paper) and entry.key.startswith("nunez2025braces_")
    arxiv = Paper("arXiv:1", "a", title="T", venue="arXiv", year=2024)
    assert bibtexparser.parse_string(bibtex([arxiv])).entries[0].entry_type == "article"
