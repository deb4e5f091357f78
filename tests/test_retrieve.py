import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from rag.question import read as parse
from rag.search.retrieve import HybridRetriever, rrf, search


def _hits(ids):
    return [NodeWithScore(node=TextNode(id_=i, text=i, metadata={}), score=1.0) for i in ids]


def test_rrf_rewards_agreement():
    fused = rrf([_hits(["a", "b", "c"]), _hits(["c", "b", "d"])], k=60)
    order = [h.node.node_id for h in fused]
    # c (ranks 3 and 1) edges out b (2 and 2); both beat items only one list found
    assert order == ["c", "b", "a", "d"]
    assert abs(fused[0].score - (1 / 63 + 1 / 61)) < 1e-12
    assert abs(fused[1].score - 2 / 62) < 1e-12


def test_hybrid_search_groups_per_paper(indexed, embedder):
    results = search("routing weights embeddings mixture-of-experts", indexed, embedder, k=2)
    assert results[0].paper.id == "p-moe"
    assert [r.rank for r in results] == [1, 2]
    assert len({r.paper.id for r in results}) == 2
    js = results[0].to_json()
    assert set(js) >= {"rank", "paper_id", "title", "url", "score", "chunk_text", "sources"}


def test_keyword_only_term_is_found_by_hybrid(indexed, embedder):
    for mode in ("rrf", "bm25"):
        assert search("neighbourhoods", indexed, embedder, k=1, mode=mode)[0].paper.id == "p-graph"


def test_the_collection_handle_is_fetched_once_for_many_searches(indexed, embedder):
    from tests.conftest import make_pipeline

    pipeline, _ = make_pipeline(indexed, embedder)
    pipeline.search("warm up")
    fetched = []
    original = indexed._get
    indexed._get = lambda *a, **k: fetched.append(a) or original(*a, **k)
    for q in ("entropy", "routers", "graphs", "nodes"):
        pipeline.search(q, 2)
    assert len(fetched) <= 1  # at most one refresh when the handle ages out


def test_a_write_refreshes_the_handle_and_the_fingerprint_check(indexed, embedder, corpus):
    from rag.index.ingest import ingest
    from tests.conftest import write_jsonl

    generation = indexed.collection.metadata["generation"]
    write_jsonl(
        corpus / "more.jsonl", [{"id": "p-new", "title": "New", "abstract": "Fresh words about zebras."}]
    )
    ingest([corpus], indexed, embedder, chunk_tokens=60)
    assert indexed.collection.metadata["generation"] != generation
    assert search("zebras", indexed, embedder, k=1)[0].paper.id == "p-new"


def test_weighted_rrf_scales_each_ranking():
    fused = rrf([_hits(["a"]), _hits(["b"])], k=60, weights=[1.0, 2.0])
    assert [h.node.node_id for h in fused] == ["b", "a"]
    assert abs(fused[0].score - 2 / 61) < 1e-12


NAMED = [
    {"id": f"p-gen-{i}", "title": f"Forecasting study {i}",
     "abstract": f"Time series forecasting with large pretrained models improves accuracy on benchmark {i}. "
     "Forecasting models scale with data and parameters across many domains."}
    for i in range(8)
] + [
    {"id": "p-named", "title": "A sparse forecaster",
     "abstract": "We present Time-MoE, a sparse mixture of experts for time series. Time-MoE is trained "
     "with the Adam optimizer on three hundred billion points."},
    {"id": "p-other", "title": "Adam-mini", "abstract": "Adam-mini is an optimizer that cuts memory by half."},
]  # fmt: skip


@pytest.fixture
def named(tmp_path, store, embedder):
    from rag.index.ingest import ingest
    from tests.conftest import write_jsonl

    folder = tmp_path / "named"
    folder.mkdir()
    write_jsonl(folder / "p.jsonl", NAMED)
    ingest([folder], store, embedder, chunk_tokens=60)
    return store


def test_a_rare_name_pulls_the_paper_that_contains_it(named, embedder):
    from rag.search.retrieve import NameRetriever, name_hits, rare_names

    assert rare_names(parse("Which optimizer does Time-MoE use for forecasting models?").names, named) == [
        "Time-MoE"
    ]
    assert set(name_hits("Which optimizer does Time-MoE use for forecasting models?", named)) == {"Time-MoE"}
    hits = NameRetriever(named, embedder).retrieve("Which optimizer does Time-MoE use?")
    assert hits and all(h.node.metadata["paper_id"] == "p-named" for h in hits)
    # a name in more chunks than the cap is common and pulls nothing
    assert NameRetriever(named, embedder, max_chunks=0).retrieve("Which optimizer does Time-MoE use?") == []
    with_names = search("Which optimizer does Time-MoE use for forecasting models?", named, embedder, k=3)
    assert with_names[0].paper.id == "p-named"


def test_sources_narrow_to_the_papers_that_name_the_subject(named, embedder):
    from rag.search.retrieve import on_subject

    no_names = HybridRetriever(named, embedder, name_weight=0)
    results = search("Which optimizer cuts memory for Time-MoE?", named, embedder, k=4, retriever=no_names)
    assert "p-named" in [r.paper.id for r in results] and len(results) > 1
    kept = on_subject(parse("Which optimizer cuts memory for Time-MoE?"), results, named)
    assert [r.paper.id for r in kept] == ["p-named"]
    assert [r.rank for r in kept] == [1]
    # nothing named in the index: unchanged
    plain = search("forecasting models", named, embedder, k=3)
    assert on_subject(parse("forecasting models with FooBarNet"), plain, named) == plain
    # "Which papers X with Time-MoE or Y?": the name is one alternative's subject, not every source's.
    several = "Which papers train Time-MoE on forecasting data or cut optimizer memory by half?"
    assert [r.paper.id for r in on_subject(parse(several), results, named)] == [r.paper.id for r in results]
    shared = "Which papers train Time-MoE on forecasting data or evaluate Time-MoE on many domains?"
    assert [r.paper.id for r in on_subject(parse(shared), results, named)] == ["p-named"]


def _results(ids):
    from rag.types import Paper, SearchResult

    return [SearchResult(i, Paper(pid, "abstract"), 1.0 / i, []) for i, pid in enumerate(ids, 1)]


def test_paper_rankings_interleave_with_the_first_on_top():
    from rag.search.retrieve import fuse_papers

    fused = fuse_papers([_results(["a", "b", "c"]), _results(["x", "a"]), _results(["y", "z"])], k=4)
    assert [r.paper.id for r in fused] == ["a", "x", "y", "b"]
    assert [r.rank for r in fused] == [1, 2, 3, 4]


def test_each_alternative_of_a_several_papers_question_brings_its_best_paper(named, embedder):
    question = "Which papers study pretrained forecasting models or memory-saving optimizers?"
    # Asked as one, the forecasting papers fill the top; asked for each alternative, both show.
    whole = search(question.replace("Which papers", "Which study"), named, embedder, k=2)
    assert "p-other" not in [r.paper.id for r in whole]
    alternatives = parse(question).alternatives
    found = [r.paper.id for r in search(question, named, embedder, k=2, alternatives=alternatives)]
    assert "p-other" in found and any(pid.startswith("p-gen") or pid == "p-named" for pid in found)
