"""Themed overviews: a survey list grouped by the map's themes, the model's sources spread over them."""

import numpy as np

from rag.map.model import Cluster, ConferenceMap, MapPaper
from rag.map.themes import MAX_THEMES, OTHER, SPLIT_FROM, group_by_theme, spread
from rag.search.survey import SurveyHit
from rag.types import Paper, SearchResult
from ui.render import render_list


def _map(themes_of: dict[str, int], names: list[list[str]]) -> ConferenceMap:
    papers = [MapPaper(pid, pid, "", "", "", 0.5, 0.5, 0, t) for pid, t in themes_of.items()]
    themes = [Cluster(i, words, 1, 0.5, 0.5, 0) for i, words in enumerate(names)]
    return ConferenceMap("s", papers, [Cluster(0, ["all"], len(papers), 0.5, 0.5)], themes)


def _hits(ids: list[str]) -> list[SurveyHit]:
    return [
        SurveyHit(i, Paper(pid, f"Abstract of {pid}.", title=f"Title {pid}"), f"why {pid}")
        for i, pid in enumerate(ids, 1)
    ]


def test_a_list_is_grouped_by_theme_largest_first_singles_under_other():
    ids = [f"p{i}" for i in range(9)]
    where = {"p0": 1, "p1": 0, "p2": 1, "p3": 0, "p4": 1, "p5": 2, "p6": 3}  # p7, p8 not on the map
    themes = group_by_theme(_hits(ids), _map(where, [["graphs"], ["proteins"], ["robots"], ["music"]]))
    assert [t.name for t in themes] == ["proteins", "graphs", OTHER]
    assert [h.paper.id for h in themes[0].hits] == ["p0", "p2", "p4"]  # in list order
    assert {h.paper.id for h in themes[-1].hits} == {"p5", "p6", "p7", "p8"}
    assert sum(len(t.hits) for t in themes) == len(ids)  # every paper once


def test_no_overview_without_a_map_a_short_list_or_a_single_theme():
    hits = _hits(["a", "b", "c", "d", "e"])
    assert group_by_theme(hits, None) == []
    assert group_by_theme(hits[:3], _map({"a": 0, "b": 0, "c": 1}, [["x"], ["y"]])) == []
    assert group_by_theme(hits, _map(dict.fromkeys("abcde", 0), [["x"]])) == []


def test_at_most_max_themes_groups():
    ids = [f"p{i}" for i in range(2 * (MAX_THEMES + 3))]
    where = {pid: i // 2 for i, pid in enumerate(ids)}
    themes = group_by_theme(_hits(ids), _map(where, [[f"t{i}"] for i in range(MAX_THEMES + 3)]))
    assert len(themes) == MAX_THEMES + 1 and themes[-1].name == OTHER


def test_a_large_list_in_one_theme_is_clustered_by_itself():
    n = SPLIT_FROM + 4
    ids = [f"p{i}" for i in range(n)]
    rng = np.random.default_rng(0)
    centres = np.eye(8)[:2]
    vecs = {pid: centres[i % 2] + 0.05 * rng.standard_normal(8) for i, pid in enumerate(ids)}
    hits = _hits(ids)
    for i, h in enumerate(hits):  # two kinds of paper, said in their own words
        h.paper.abstract = "Protein folding with graphs." if i % 2 else "Robot grasping with graphs."
    themes = group_by_theme(
        hits, _map(dict.fromkeys(ids, 0), [["graphs"]]), lambda got: {p: vecs[p] for p in got}
    )
    assert len(themes) >= 2 and OTHER not in [t.name for t in themes]
    groups = [{int(h.paper.id[1:]) % 2 for h in t.hits} for t in themes]
    assert all(len(g) == 1 for g in groups) and {0, 1} == set().union(*groups)  # each group is one kind
    assert any("protein" in t.name for t in themes) and any("robot" in t.name for t in themes)


def test_the_models_sources_come_from_different_themes_first():
    where = {"a": 0, "b": 0, "c": 0, "d": 1, "e": 1}
    themes = group_by_theme(_hits(list("abcde")), _map(where, [["x"], ["y"], ["z"]]))
    results = [SearchResult(i, Paper(pid, ""), [], 1.0) for i, pid in enumerate("abcde", 1)]
    first = [r.paper.id for r in spread(results, themes)]
    assert first[:2] == ["a", "d"] and sorted(first) == list("abcde")
    assert [r.rank for r in spread(results, themes)] == [1, 2, 3, 4, 5]


def test_the_chat_shows_the_themes_above_the_full_table():
    where = {"a": 0, "b": 0, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1}
    hits = _hits(list("abcdefgh"))
    themes = group_by_theme(hits, _map(where, [["graph rewiring"], ["protein folding"]]))
    page = render_list("8 indexed papers are about “x”:", hits, themes)
    assert (
        page.index("protein folding") < page.index("graph rewiring") < page.index('<table class="cw-list">')
    )
    assert "why c" in page and "and 2 more in the table" in page
    assert page.count("<tr>") == len(hits) + 1  # the table keeps every paper


def test_theme_names_leave_out_what_the_whole_list_is_about():
    where = {"a": 0, "b": 0, "c": 1, "d": 1}
    names = [["backdoor", "triggers"], ["backdoor attacks"]]  # the second would say nothing but the topic
    themes = group_by_theme(_hits(list("abcd")), _map(where, names), topic="backdoor attacks")
    assert [t.name for t in themes] == ["triggers", "backdoor attacks"]
