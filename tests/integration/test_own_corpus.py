"""A researcher's own corpus: an OpenReview v2 export, an arXiv JSONL file and a BibTeX library of a
few hundred papers each, ingested in one call with the real embedder; every paper is found by its
exact title and keeps its metadata."""

from __future__ import annotations

import json
import random

import pytest

from eval.distractors import Rewriter
from rag.answer.pipeline import Pipeline
from rag.index.ingest import dedupe, ingest
from rag.index.readers import read_paths
from rag.index.sentence_vectors import sentence_vectors_from_settings
from rag.settings import Settings
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow
PER_FORMAT = 200


def _papers(n: int, seed: int) -> list[tuple[str, str, list[str]]]:
    """(title, abstract, authors): field-like text written from the seed abstracts' templates."""
    seeds, _ = dedupe(read_paths([SEEDS]).papers)
    rewriter = Rewriter(seeds)
    out, titles = [], set()
    for i in range(n * 2):
        rng = random.Random(f"own:{seed}:{i}")
        title_template, templates = rewriter.plan(i, seed)
        names: dict[str, str] = {}
        title = rewriter.title(title_template, rng, names)
        if title in titles:
            continue
        titles.add(title)
        abstract = " ".join(rewriter.sentence(t, rng, names, 0.5) for t in templates)
        authors = [
            f"{rng.choice(['Ana', 'Bo', 'Chen', 'Dara'])} {rng.choice(['Ito', 'Kim', 'Lund', 'Moss'])}{i}"
        ]
        out.append((title, abstract, authors))
        if len(out) == n:
            break
    return out


def _write(folder):
    notes = [
        {"id": f"or{i:04d}", "forum": f"or{i:04d}", "cdate": 1727000000000,
         "content": {"title": {"value": t}, "abstract": {"value": a}, "authors": {"value": au},
                     "venue": {"value": ["ICLR 2025 Oral", "ICLR 2025 Poster", "ICLR 2025 Spotlight"][i % 3]},
                     "keywords": {"value": ["k"]}}}
        for i, (t, a, au) in enumerate(_papers(PER_FORMAT, 1))
    ]  # fmt: skip
    (folder / "iclr.json").write_text(json.dumps({"notes": notes}))
    with open(folder / "arxiv.jsonl", "w") as f:
        for i, (t, a, au) in enumerate(_papers(PER_FORMAT, 2)):
            f.write(json.dumps({"id": f"2410.{i:05d}", "title": t, "abstract": a, "authors": ", ".join(au),
                                "categories": "cs.LG", "update_date": "2024-10-30"}) + "\n")  # fmt: skip
    entries = [
        f"@inproceedings{{bib{i},\n  title = {{{t}}},\n  author = {{{' and '.join(au)}}},\n"
        f"  booktitle = {{NeurIPS 2024}},\n  year = {{2024}},\n  abstract = {{{a}}}\n}}\n"
        for i, (t, a, au) in enumerate(_papers(PER_FORMAT, 3))
    ]
    (folder / "library.bib").write_text("\n".join(entries))
    return {n["id"]: n["content"]["title"]["value"] for n in notes}


def test_three_formats_in_one_ingest_found_by_title(tmp_path):
    from rag.index.embedding import embedder_from_settings
    from rag.index.store import store_from_settings

    folder = tmp_path / "mine"
    folder.mkdir()
    _write(folder)
    settings = Settings(data_dir=tmp_path / "data")
    embedder = embedder_from_settings(settings)
    store = store_from_settings(settings, embedder)
    kept = sentence_vectors_from_settings(settings, embedder)  # as `citewise ingest` keeps them
    summary = ingest([folder], store, embedder, chunk_tokens=settings.chunk_tokens, sentences=kept)
    assert summary.files_read == 3 and not summary.errors
    assert summary.papers == 3 * PER_FORMAT

    papers = {}
    for _, meta, _ in store.iter_chunks(include_documents=False):
        if meta.get("position") == 0:
            from rag.index.records import paper_from_meta

            papers[meta["paper_id"]] = paper_from_meta(meta)
    assert len(papers) == 3 * PER_FORMAT
    # The search a user's question goes through (fusion, names, the re-ranking by sentences).
    pipeline = Pipeline(settings, store=store, embedder=embedder)
    first = 0
    for pid, paper in papers.items():
        first += pipeline.search(paper.title, 1)[0].paper.id == pid
    assert first / len(papers) >= 0.95, first / len(papers)

    oral = papers["or0000"]
    assert (oral.venue, oral.status, oral.year, oral.url) == (
        "ICLR 2025",
        "oral",
        2025,
        "https://openreview.net/forum?id=or0000",
    )
    arxiv = papers["arXiv:2410.00000"]
    assert (arxiv.venue, arxiv.year, arxiv.url) == ("arXiv", 2024, "https://arxiv.org/abs/2410.00000")
    bib = papers["bib0"]
    assert (bib.venue, bib.year) == ("NeurIPS 2024", 2024) and bib.authors and bib.title
