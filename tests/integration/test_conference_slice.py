"""Survey answers on a slice of the real conference: a few hundred real ICLR 2025 abstracts, read
as the file ships, indexed by the shipped embedder into a real Chroma, asked as a user asks. The
list is checked against what the abstracts themselves say (a paper fits when its title or abstract
names the technique), not against a list written down here."""

from __future__ import annotations

import gzip
import json
import random
import re

import pytest

from rag.answer.pipeline import Pipeline, SurveyEvent
from rag.index.embedding import embedder_from_settings
from rag.index.ingest import ingest
from rag.index.store import store_from_settings
from rag.settings import Settings
from rag.text import plain
from tests.conftest import ROOT

CONFERENCE = ROOT.parent / "shared" / "data" / "iclr2025" / "iclr2025_abstracts.jsonl.gz"
KAN = re.compile(r"kolmogorov.arnold|\bKANs?\b", re.I)
UNLEARNING = re.compile(r"machine unlearning", re.I)
OTHERS = 140

pytestmark = pytest.mark.skipif(not CONFERENCE.exists(), reason=f"the real conference is not at {CONFERENCE}")


def _text(paper: dict) -> str:
    return f"{paper['title']} {paper['abstract']}"


@pytest.fixture(scope="module")
def conference(tmp_path_factory):
    """(pipeline, the slice's papers): every paper that names either technique, and others drawn
    with a fixed seed, written as one .jsonl.gz like the conference file and ingested."""
    with gzip.open(CONFERENCE, "rt", encoding="utf-8") as fh:
        everything = [json.loads(line) for line in fh if line.strip()]
    named = [p for p in everything if KAN.search(_text(p)) or re.search("unlearn", _text(p), re.I)]
    rest = [p for p in everything if p not in named]
    papers = named + random.Random(0).sample(rest, OTHERS)
    folder = tmp_path_factory.mktemp("slice")
    with gzip.open(folder / "slice.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(p) + "\n" for p in papers)
    settings = Settings(data_dir=tmp_path_factory.mktemp("slice-index"))
    embedder = embedder_from_settings(settings)
    store = store_from_settings(settings, embedder)
    summary = ingest([folder], store, embedder, chunk_tokens=settings.chunk_tokens)
    assert summary.papers == len(papers) and not summary.errors
    return Pipeline(settings, store=store, embedder=embedder), papers


def _listed(pipeline: Pipeline, question: str) -> SurveyEvent:
    """The survey list, shown before the model writes (the model is never asked here)."""
    events = pipeline.stream(question)
    try:
        return next(e for e in events if isinstance(e, SurveyEvent))
    finally:
        events.close()


def test_every_paper_that_names_a_technique_is_listed(conference):
    pipeline, papers = conference
    truth = {p["id"] for p in papers if KAN.search(_text(p))}
    listed = {
        h.paper.id for h in _listed(pipeline, "Which papers use Kolmogorov-Arnold networks (KANs)?").hits
    }
    assert len(truth & listed) / len(truth) >= 0.9, sorted(truth - listed)
    assert len(truth & listed) / len(listed) >= 0.9, sorted(listed - truth)


def test_a_status_said_in_words_keeps_every_other_paper_out(conference):
    pipeline, papers = conference
    status = {p["id"]: p["status"] or "" for p in papers}
    truth = {p["id"] for p in papers if UNLEARNING.search(_text(p)) and "Oral" in (p["status"] or "")}
    survey = _listed(pipeline, "Which oral papers study machine unlearning?")
    listed = {h.paper.id for h in survey.hits}
    assert listed and all("Oral" in status[pid] for pid in listed), {pid: status[pid] for pid in listed}
    assert truth <= listed, sorted(truth - listed)
    # The answer says how many it found and within which filter.
    assert survey.sentence.startswith(f"{len(listed)} indexed paper") and "oral" in survey.sentence
    # Each listed paper comes with the sentence of its own abstract that names the technique.
    by_id = {p["id"]: p for p in papers}
    for hit in survey.hits:
        assert UNLEARNING.search(hit.sentence), hit.sentence
        assert hit.sentence[:40] in plain(by_id[hit.paper.id]["abstract"]), hit.sentence
