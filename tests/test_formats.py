"""Readers for the formats users have (OpenReview v1/v2, arXiv, BibTeX), chosen by content."""

from __future__ import annotations

import shutil
from pathlib import Path

from rag.index.readers import read_paths

DATA = Path(__file__).parent / "data" / "formats"


def _read(name: str):
    report = read_paths([DATA / name])
    return {p.id: p for p in report.papers}, report.errors


def test_openreview_v2_notes_keep_their_metadata():
    papers, errors = _read("openreview_v2.json")
    paper = papers["abc123XYZ"]
    assert paper.title == "Sparse Routers Learn Faster"
    assert paper.authors == ["Ada Lovelace", "Alan Turing"]
    assert (paper.venue, paper.status, paper.year) == ("ICLR 2025", "oral", 2025)
    assert paper.url == "https://openreview.net/forum?id=abc123XYZ"
    assert paper.extra["keywords"] == ["mixture of experts", "routing"]
    assert papers["def456UVW"].status == "poster"
    # the note without an abstract is reported, the others still read
    assert len(errors) == 1 and "openreview_v2.json: record 3: record has no abstract" in str(errors[0])


def test_openreview_v1_plain_values_and_a_bad_line():
    papers, errors = _read("openreview_v1.jsonl")
    old = papers["v1paperAA"]
    assert (old.title, old.venue, old.status, old.year) == (
        "An Old-Style Note",
        "ICLR 2020",
        "spotlight",
        2020,
    )
    assert papers["v1paperBB"].status == "submitted" and papers["v1paperBB"].year == 2020
    assert [(e.line, "malformed JSON" in e.message) for e in errors] == [(3, True)]


def test_arxiv_snapshot_records():
    papers, errors = _read("arxiv.jsonl")
    paper = papers["arXiv:2405.01234"]
    assert paper.title == "Attention Sinks Explained"  # the snapshot's line breaks go
    assert paper.authors == ["Alice Smith", "Bob Jones", "Carol White"]
    assert (paper.venue, paper.year) == ("arXiv", 2024)
    assert paper.url == "https://arxiv.org/abs/2405.01234"
    assert paper.abstract == "We explain why language models attend to the first token."
    old = papers["arXiv:hep-th/9901001"]
    assert old.year == 1999 and old.url == "https://arxiv.org/abs/hep-th/9901001"
    assert len(errors) == 1 and errors[0].line == 3


def test_bibtex_entries_with_abstracts_and_the_rest_reported():
    papers, errors = _read("library.bib")
    paper = papers["lovelace2025sparse"]
    assert paper.title == "Sparse Routers Learn Faster"  # braces and LaTeX decoded
    assert "Café-style" in paper.abstract
    assert paper.authors == ["Ada Lovelace", "Alan Turing"]
    assert (paper.venue, paper.year) == ("International Conference on Learning Representations", 2025)
    journal = papers["10.1234/jgl.2024.1"]
    assert (
        journal.venue == "Journal of Graph Learning" and journal.url == "https://doi.org/10.1234/jgl.2024.1"
    )
    messages = " | ".join(f"{e.line}: {e.message}" for e in errors)
    assert "'noabstract2020' has no abstract" in messages
    assert "unreadable BibTeX entry" in messages
    assert len(papers) == 2


def test_format_is_chosen_by_content_not_extension(tmp_path):
    shutil.copy(DATA / "library.bib", tmp_path / "export.txt")
    shutil.copy(DATA / "openreview_v2.json", tmp_path / "notes.jsonl")
    shutil.copy(DATA / "arxiv.jsonl", tmp_path / "arxiv.json")
    report = read_paths([tmp_path])
    ids = {p.id for p in report.papers}
    assert {"lovelace2025sparse", "abc123XYZ", "arXiv:2405.01234"} <= ids
    assert all(p.title for p in report.papers)


def test_one_ingest_reads_every_format(tmp_path, store, embedder):
    from rag.index.ingest import ingest

    summary = ingest([DATA], store, embedder, chunk_tokens=60)
    assert summary.papers == 8 and summary.files_read == 4
    assert len(summary.errors) == 5  # each with file and line or record, none stops the rest
