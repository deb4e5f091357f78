"""The conference map: kept beside the index, laid out again only when an ingest changed the
papers; topics nest their themes and are named by their own words; the page fetches nothing."""

import re

import numpy as np

from rag.index.ingest import ingest
from rag.map import topics as tp
from rag.map.build import build_map, current_map, ensure_map, layout
from rag.map.model import ConferenceMap
from rag.map.render import write_html
from tests.conftest import PAPERS, write_jsonl


def test_a_kept_map_is_current_until_an_ingest_changes_the_papers(store, embedder, corpus, tmp_path):
    folder = tmp_path / "map"
    ingest([corpus], store, embedder, chunk_tokens=60)
    built = build_map(folder, store)
    assert {p.id for p in built.papers} == {r["id"] for r in PAPERS}
    kept = current_map(folder, store)
    assert kept is not None and kept.signature == built.signature

    ingest([corpus], store, embedder, chunk_tokens=60)  # nothing changed: the map stays current
    assert current_map(folder, store) is not None

    write_jsonl(
        corpus / "papers_b.jsonl",
        [{"id": "p-new", "title": "Graph Rewiring", "abstract": "We rewire graphs."}],
    )
    ingest([corpus], store, embedder, chunk_tokens=60)
    assert current_map(folder, store) is None  # stale: made before the new paper
    again = ensure_map(folder, store)
    assert "p-new" in {p.id for p in again.papers} and again.signature != built.signature
    assert current_map(folder, store).signature == again.signature


def test_a_changed_abstract_makes_the_map_stale(store, embedder, corpus, tmp_path):
    ingest([corpus], store, embedder, chunk_tokens=60)
    build_map(tmp_path / "map", store)
    rows = [dict(r) for r in PAPERS]
    rows[0]["abstract"] += " One more sentence."
    write_jsonl(corpus / "papers_a.jsonl", rows)
    ingest([corpus], store, embedder, chunk_tokens=60)
    assert current_map(tmp_path / "map", store) is None


def test_an_unreadable_or_older_map_is_built_again(store, embedder, corpus, tmp_path):
    folder = tmp_path / "map"
    ingest([corpus], store, embedder, chunk_tokens=60)
    build_map(folder, store)
    (folder / "map.json").write_text("{not json")
    assert current_map(folder, store) is None
    assert ConferenceMap.load(folder / "nothing.json") is None
    assert len(ensure_map(folder, store).papers) == len(PAPERS)


def _groups(rng, per_group: int = 40):
    """Three groups of vectors around three directions, and texts saying each group's own word."""
    centres = np.eye(16)[:3]
    vectors = np.vstack([c + 0.15 * rng.standard_normal((per_group, 16)) for c in centres])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    words = ["protein folding", "graph rewiring", "robot grasping"]
    shared = ["model", "method", "network", "approach"]  # every group says these
    texts = [f"A {shared[i % 4]} for {words[g]}. The {shared[(i + 1) % 4]} is trained."
             for g in range(3) for i in range(per_group)]  # fmt: skip
    return vectors, texts, np.repeat(np.arange(3), per_group)


def test_themes_sit_inside_one_topic_and_topics_find_the_groups():
    vectors, _, truth = _groups(np.random.default_rng(0))
    topic, theme = tp.two_levels(vectors)
    assert len(set(topic)) == tp.topic_count(len(vectors)) == 2 or len(set(topic)) >= 2
    for t in set(theme):
        assert len(set(topic[theme == t])) == 1  # a theme never straddles two topics
    # The biggest topic is numbered 0, and each group lands in one topic.
    assert np.bincount(topic).argmax() == 0
    for g in range(3):
        assert len(set(topic[truth == g])) == 1


def test_names_are_each_clusters_own_words_not_the_words_all_share():
    _, texts, truth = _groups(np.random.default_rng(1))
    marks, vocab = tp.term_marks(texts)
    names = tp.ctfidf_names(marks, vocab, truth.astype(np.int32))
    assert "protein folding" in names[0] and "graph rewiring" in names[1] and "robot grasping" in names[2]
    assert not any(w in " ".join(n) for n in names for w in ("model", "method", "network", "approach"))
    # A theme's name leaves out what its topic's name already says.
    told = tp.ctfidf_names(marks, vocab, truth.astype(np.int32), said=[["protein folding"], [], []])
    assert not any("protein" in term or "folding" in term for term in told[0])


def test_web_addresses_do_not_name_a_cluster():
    texts = [f"Code at https://github.com/x/y{i}. Graph rewiring." for i in range(6)] + [
        "Robot grasping."
    ] * 6
    marks, vocab = tp.term_marks(texts)
    names = tp.ctfidf_names(marks, vocab, np.repeat([0, 1], 6).astype(np.int32))
    assert not any("github" in term or "https" in term for term in names[0])


def test_the_layout_fills_the_unit_square_and_is_the_same_each_time():
    vectors, _, _ = _groups(np.random.default_rng(2), per_group=12)
    first, second = layout(vectors), layout(vectors)
    assert first.shape == (36, 2) and np.allclose(first, second)
    assert first.min() == 0.0 and first.max() == 1.0
    assert layout(vectors[:2]).shape == (2, 2) and layout(vectors[:5]).shape == (5, 2)


def test_the_page_fetches_nothing_and_a_title_cannot_end_its_script(store, embedder, corpus, tmp_path):
    rows = [dict(r) for r in PAPERS]
    rows[0]["title"] = "</script><script>alert(1)</script>"
    write_jsonl(corpus / "papers_a.jsonl", rows)
    ingest([corpus], store, embedder, chunk_tokens=60)
    page = write_html(build_map(tmp_path / "map", store), tmp_path / "map.html", "Test <venue>").read_text()
    assert page.count("</script>") == 2  # the data element's and the program's, nothing from a title
    assert "<title>Test &lt;venue></title>" in page
    fetched = re.findall(r"""(?:src|href)\s*=\s*["']?(https?:|//)|@import|url\(\s*["']?https?:""", page)
    assert not fetched


def test_a_read_only_folder_still_gets_a_map_unkept(store, embedder, corpus, tmp_path):
    ingest([corpus], store, embedder, chunk_tokens=60)
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")  # the map folder cannot be made under a file
    built = build_map(blocked / "map", store)
    assert len(built.papers) == len(PAPERS) and current_map(blocked / "map", store) is None


def test_two_users_opening_the_map_at_once_lay_it_out_once(store, embedder, corpus, tmp_path, monkeypatch):
    import threading

    import rag.map.build as mb

    ingest([corpus], store, embedder, chunk_tokens=60)
    built = []
    real = mb.build_map
    monkeypatch.setattr(mb, "build_map", lambda *a, **k: built.append(1) or real(*a, **k))
    got = []
    threads = [
        threading.Thread(target=lambda: got.append(mb.ensure_map(tmp_path / "map", store))) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and len({m.signature for m in got}) == 1 and len(got) == 3


def test_a_model_is_shown_the_titles_nearest_its_cluster_mean():
    from eval.map_names import typical_titles

    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.8, 0.2]])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    titles = ["a", "b", "c", "d"]
    rows = np.array([0, 1, 3, 2])  # one outlier (c) in the cluster
    assert typical_titles(rows, vectors, titles, 2) == ["d", "b"]  # nearest the mean first
    assert typical_titles(rows, vectors, titles, 4)[-1] == "c"


def test_the_map_shows_statuses_in_a_readers_words(store, embedder, corpus, tmp_path):
    write_jsonl(
        corpus / "papers_b.jsonl",
        [
            {"id": "p-rej", "title": "A Rejected One", "abstract": "We rewire graphs.", "status": "Submitted to ICLR 2025"},
            {"id": "p-desk", "title": "A Desk Rejection", "abstract": "We prune nets.",
             "status": "ICLR 2025 Conference Desk Rejected Submission"},
        ],
    )  # fmt: skip
    ingest([corpus], store, embedder, chunk_tokens=60)
    shown = {p.id: p.status for p in build_map(tmp_path / "map", store).papers}
    assert shown["p-rej"] == "rejected" and shown["p-desk"] == "desk-rejected"
