"""The conference map: kept beside the index, laid out again only when an ingest changed the
papers; topics nest their themes and are named by their own words; the page fetches nothing."""

import re

import numpy as np

from rag.index.ingest import ingest
from rag.map import colours
from rag.map import regions as rg
from rag.map import topics as tp
from rag.map.build import build_map, current_map, ensure_map, layout
from rag.map.labels import forms, overlaps, place
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
    topic, theme = rg.regions(vectors, layout(vectors), 3, 6)
    assert len(set(topic)) == 3 and len(set(theme)) >= 3
    for t in set(theme):
        assert len(set(topic[theme == t])) == 1  # a theme never straddles two topics
    # The biggest topic is numbered 0, and each group lands in one topic.
    assert np.bincount(topic).argmax() == 0
    for g in range(3):
        assert len(set(topic[truth == g])) == 1


def test_a_topic_is_one_region_of_the_picture_where_clusters_of_the_vectors_are_not():
    """Four groups by meaning, laid out so that each group is split in two far-apart halves: k-means
    on the vectors finds the groups (each spread over two places); the regions follow the picture."""
    rng = np.random.default_rng(3)
    vectors = np.vstack([c + 0.1 * rng.standard_normal((40, 16)) for c in np.eye(16)[:4]])
    spots = rng.permutation(8)  # each group's two halves go to two of eight places on a circle
    place = np.repeat(spots, 20)
    xy = np.column_stack([np.cos(place * np.pi / 4), np.sin(place * np.pi / 4)]) * 0.4 + 0.5
    xy = xy + 0.02 * rng.standard_normal(xy.shape)
    by_meaning = tp.kmeans(vectors, 4)
    topic, _ = rg.regions(vectors, xy, 4, 8)
    assert rg.region_share(xy, by_meaning).min() < 0.8  # half of a group is away from its region
    assert rg.region_share(xy, topic).min() >= 0.8


def test_region_share_is_one_for_halves_and_low_for_labels_spread_at_random():
    rng = np.random.default_rng(4)
    xy = rng.random((400, 2))
    halves = (xy[:, 0] > 0.5).astype(np.int32)
    assert rg.region_share(xy, halves).min() > 0.95
    assert rg.region_share(xy, rng.integers(0, 4, 400).astype(np.int32)).max() < 0.8


def test_a_cut_of_the_tree_nests_in_a_coarser_cut():
    vectors, _, _ = _groups(np.random.default_rng(5))
    children = rg._tree(vectors, layout(vectors))
    fine, coarse = rg.cut(children, len(vectors), 9), rg.cut(children, len(vectors), 3)
    assert len(set(fine)) == 9 and len(set(coarse)) == 3
    assert all(len(set(coarse[fine == f])) == 1 for f in set(fine))


def test_topic_names_share_no_word_and_skip_words_every_topic_says():
    rng = np.random.default_rng(6)
    words = ["graph rewiring", "graph coloring", "robot grasping"]
    texts = [
        f"Large models for {words[g]}. Large data {rng.integers(9)}." for g in range(3) for _ in range(20)
    ]
    marks, vocab = tp.term_marks(texts)
    names = tp.ctfidf_names(marks, vocab, np.repeat(np.arange(3), 20).astype(np.int32), distinct=True)
    said = [{w for term in n for w in term.split()} for n in names]
    assert not said[0] & said[1] and not said[0] & said[2] and not said[1] & said[2]
    assert "rewiring" in said[0] and "coloring" in said[1] and "robot" in said[2]
    assert not any({"large", "models", "data"} & s for s in said)  # in every paper: names nothing


def test_topics_that_border_each_other_get_different_colours():
    border = np.zeros((25, 25), dtype=int)
    for a in range(24):
        border[a, a + 1] = border[a + 1, a] = 5  # a chain: each topic touches the next
    paint = colours.assign(border)
    assert len(set(paint[:20])) == 20  # up to 20 topics, each its own colour
    assert all(paint[a] != paint[a + 1] for a in range(24))


def test_names_never_overprint_and_are_shortened_before_left_out():
    rng = np.random.default_rng(7)
    items = [(float(x), float(y), forms(["reinforcement learning", "policy", "reward"]))
             for x, y in rng.random((40, 2)) * 300]  # fmt: skip

    def size(text: str) -> tuple[float, float]:
        return 7.0 * max(map(len, text.split("\n"))), 14.0 * (1 + text.count("\n"))

    placed = place(items, size, (0, 0, 300, 300))
    assert placed and overlaps(placed) == 0
    narrow = place(items[:1], size, (0, 0, 200, 300))  # the full name is 284 wide with its margin
    assert [p.text for p in narrow] == ["reinforcement learning"]
    assert len(placed) < len(items)  # 40 names do not fit in 300 x 300: some wait for a zoom
    assert all(0 <= p.box()[0] and p.box()[2] <= 300 for p in placed)
    assert forms(["a b c d e", "f g h", "i"], wrap=10)[0] == "a b c d e · f g h\ni"


def test_the_picture_places_every_topic_name_without_overprinting(store, embedder, corpus, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rag.map.render import _names

    ingest([corpus], store, embedder, chunk_tokens=60)
    built = build_map(tmp_path / "map", store)
    fig, ax = plt.subplots(figsize=(12, 12), dpi=100)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(1.02, -0.02)
    placed = _names(fig, ax, built, halo=[])
    plt.close(fig)
    assert len(placed) == len(built.topics) and overlaps(placed) == 0


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


def test_every_topic_of_a_small_corpus_is_named():
    """A topic holding most of a small corpus cannot be twice as likely to say any word as the
    corpus is: it is still named by its own words."""
    texts = [f"Protein folding with model {i}." for i in range(8)] + [
        f"Robot grasping {i}." for i in range(4)
    ]
    marks, vocab = tp.term_marks(texts)
    names = tp.ctfidf_names(marks, vocab, np.repeat([0, 1], [8, 4]).astype(np.int32), distinct=True)
    assert "protein" in " ".join(names[0]) and "robot grasping" in names[1]
