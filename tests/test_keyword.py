"""The SQLite keyword index on its own: BM25 ranking against a brute-force reference, the rare-term
candidates, exact name lookup, filters, and keeping in step with a changing set of chunks."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from rag import text as tx
from rag.index import keyword as kw

WORDS = "graph attention sparse tokens reward model policy diffusion image audio retrieval memory".split()


def corpus(n: int = 60, seed: int = 3) -> dict[str, tuple[str, dict]]:
    rnd = random.Random(seed)
    docs = {}
    for i in range(n):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 25)))
        status = "oral" if i % 5 == 0 else "poster"
        docs[f"p{i}::h::0"] = (
            f"Report {i}. {text}.",
            {"f_status": status, "f_venue": "iclr 2025", "f_year": "2025"},
        )
    docs["p-clip::h::0"] = ("SemiCLIP aligns images and text with few pairs.", {"f_status": "poster"})
    docs["p-base::h::0"] = ("We compare against CLIP and Time-MoE on audio.", {"f_status": "oral"})
    docs["p-llm::h::0"] = ("One LLM answers.", {"f_status": "poster"})
    docs["p-llms::h::0"] = ("Two LLMs answer, and one LLM judges.", {"f_status": "poster"})
    return docs


class Source:
    """Chroma's side of a sync: the ids it holds, and which of them were fetched."""

    def __init__(self, docs):
        self.docs, self.fetched = docs, []

    def ids(self):
        return list(self.docs)

    def fetch(self, ids):
        self.fetched += ids
        return [(cid, *self.docs[cid]) for cid in ids]


def synced(tmp_path, docs, stamp="g1"):
    index, source = kw.KeywordIndex(tmp_path / "kw"), Source(docs)
    index.sync(stamp, source.ids, source.fetch)
    return index, source


def reference_bm25(query: str, docs) -> list[tuple[str, float]]:
    """BM25 (k1 1.5, b 0.75, Lucene's idf) over every document, no candidates."""
    bodies = {cid: tx.keyword_terms(text) for cid, (text, _) in docs.items()}
    avg = sum(map(len, bodies.values())) / len(bodies)
    terms = set(tx.keyword_terms(query))
    df = {t: sum(t in b for b in bodies.values()) for t in terms}
    out = []
    for cid, body in bodies.items():
        tf = Counter(body)
        norm = kw.K1 * (1 - kw.B + kw.B * len(body) / avg)
        s = sum(
            math.log(1 + (len(bodies) - df[t] + 0.5) / (df[t] + 0.5)) * tf[t] * (kw.K1 + 1) / (tf[t] + norm)
            for t in terms
            if tf[t]
        )
        if s > 0:
            out.append((cid, s))
    return sorted(out, key=lambda x: -x[1])


@pytest.mark.parametrize(
    "query", ["sparse graph attention", "reward policy for diffusion", "audio memory image"]
)
def test_ranking_equals_bm25_over_every_chunk(tmp_path, query):
    docs = corpus()
    index, _ = synced(tmp_path, docs)
    got = index.search(query, 10)
    want = reference_bm25(query, docs)[:10]
    assert [c for c, _ in got] == [c for c, _ in want]
    assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(got, want))


def test_rare_terms_choose_the_candidates(tmp_path, monkeypatch):
    docs = corpus()
    index, _ = synced(tmp_path, docs)
    # Only the rarest term may pick candidates: the one chunk with "SemiCLIP" still comes first,
    # scored with every query term.
    monkeypatch.setattr(kw, "RARE_POSTINGS", 1)
    got = index.search("semiclip image text alignment", 5)
    assert got[0][0] == "p-clip::h::0"
    assert got[0][1] == pytest.approx(reference_bm25("semiclip image text alignment", docs)[0][1])


def test_names_are_looked_up_exactly(tmp_path):
    index, _ = synced(tmp_path, corpus())
    assert index.name_chunks(["SemiCLIP"], 5) == ["p-clip::h::0"]
    assert index.name_chunks(["CLIP"], 5) == ["p-base::h::0"]  # not inside "SemiCLIP"
    assert index.name_chunks(["Time-MoE"], 5) == ["p-base::h::0"]
    assert index.name_chunks(["clip"], 5) == []
    assert index.name_count(["Report"], 100) == 60  # capitalized words count even opening a sentence
    assert index.name_count(["Report"], 7) == 7
    assert sorted(index.name_chunks(tx.name_forms("LLM"), 5)) == ["p-llm::h::0", "p-llms::h::0"]
    assert index.name_count(tx.name_forms("LLMs"), 5) == 2  # a chunk with both forms counts once


def test_filters_hold_on_both_sides(tmp_path):
    docs = corpus()
    index, _ = synced(tmp_path, docs)
    oral = {"status": ("oral",)}
    hits = index.search("graph attention reward", 50, oral)
    assert hits and all(docs[c][1]["f_status"] == "oral" for c, _ in hits)
    assert index.name_chunks(["SemiCLIP"], 5, oral) == []
    assert index.name_chunks(["CLIP"], 5, oral) == ["p-base::h::0"]


def test_sync_fetches_only_what_changed(tmp_path):
    docs = corpus()
    index, source = synced(tmp_path, docs)
    assert index.size == len(docs) and len(source.fetched) == len(docs)
    del docs["p-clip::h::0"]
    docs["p-quokka::h::0"] = ("Quokkas smile at SemiCLIP.", {"f_status": "poster"})
    source.fetched = []
    index.sync("g2", source.ids, source.fetch)
    assert source.fetched == ["p-quokka::h::0"]
    assert index.size == len(docs)
    assert [c for c, _ in index.search("semiclip", 5)] == ["p-quokka::h::0"]
    assert index.name_chunks(["SemiCLIP"], 5) == ["p-quokka::h::0"]
    index.sync("g2", source.ids, source.fetch)  # same stamp: nothing read
    assert source.fetched == ["p-quokka::h::0"]


def test_a_new_schema_or_another_process_sees_the_same_file(tmp_path):
    docs = corpus(10)
    index, source = synced(tmp_path, docs)
    other = kw.KeywordIndex(tmp_path / "kw")  # a second process opening the same file
    assert other.stamp() == "g1" and other.size == len(docs)
    source.fetched = []
    other.sync("g2", source.ids, source.fetch, reset="2")  # filter fields changed in place
    assert sorted(source.fetched) == sorted(docs)
    assert index.size == len(docs)


def test_files_of_the_old_index_are_removed(tmp_path):
    old = tmp_path / "kw"
    old.mkdir()
    (old / "citewise_stamp.json").write_text("{}")
    (old / "retriever.json").write_text("{}")
    kw.KeywordIndex(old)
    assert sorted(p.name for p in old.iterdir() if not p.name.startswith(kw.FILE + "-")) == [kw.FILE]
