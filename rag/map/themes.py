"""Themed overviews: a survey list grouped by the map's themes, each theme with its name, its
papers and the sentence of each that shows it fits.

A list gathered by a phrase ("diffusion models for molecules") mostly falls in a few themes of
the conference map (on 20 dev survey lists, 0.53 of a list's papers sit in its 3 largest themes,
against 0.20 for random papers). When a large list falls mostly in one theme, that theme says
little about it: the list is then clustered by itself (k-means on its papers' vectors) and each
group named by the words that set it apart from the rest of the list."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rag.map import topics as tp
from rag.map.model import ConferenceMap
from rag.search.survey import SurveyHit
from rag.types import SearchResult

MAX_THEMES = 6  # more groups than this read as a second list
SPLIT_FROM = 16  # a list this long is clustered by itself when one theme holds most of it
MOST = 0.5
OTHER = "Other papers"

Vectors = Callable[[Sequence[str]], dict[str, np.ndarray]]  # paper ids -> their unit vectors


@dataclass(frozen=True)
class Theme:
    name: str
    hits: list[SurveyHit]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "papers": [h.paper.id for h in self.hits]}


def group_by_theme(
    hits: Sequence[SurveyHit],
    conference_map: ConferenceMap | None,
    vectors: Vectors | None = None,
    topic: str = "",
) -> list[Theme]:
    """The list's papers grouped by theme, the largest first, at most MAX_THEMES groups of two
    or more papers (the rest under OTHER); [] when there is no map or the list is too short to group.
    Names leave out the words of `topic`, what the whole list is about."""
    if conference_map is None or len(hits) < 4:
        return []
    by_theme: dict[int, list[SurveyHit]] = {}
    for hit in hits:
        placed = conference_map.paper(hit.paper.id)
        by_theme.setdefault(placed.theme if placed else -1, []).append(hit)
    biggest = max((v for k, v in by_theme.items() if k >= 0), key=len, default=[])
    if len(hits) >= SPLIT_FROM and len(biggest) > MOST * len(hits) and vectors is not None:
        split = _split(hits, vectors, topic)
        if split:
            return split
    named = {k: " · ".join(tp.without(conference_map.themes[k].words, topic)) for k in by_theme if k >= 0}
    return _groups([(named.get(k, OTHER), v) for k, v in by_theme.items()])


def _groups(groups: list[tuple[str, list[SurveyHit]]]) -> list[Theme]:
    """Largest first; singles and what exceeds MAX_THEMES go under OTHER, last; list order within."""
    groups.sort(key=lambda g: (g[0] == OTHER, -len(g[1]), min(h.rank for h in g[1])))
    kept = [g for g in groups if g[0] != OTHER and len(g[1]) >= 2][:MAX_THEMES]
    rest = [h for g in groups if g not in kept for h in g[1]]
    themes = [Theme(name, sorted(v, key=lambda h: h.rank)) for name, v in kept]
    if rest and len(themes) >= 2:  # a single theme and "the others" is no overview
        themes.append(Theme(OTHER, sorted(rest, key=lambda h: h.rank)))
    return themes if len(themes) >= 2 else []


def _split(hits: Sequence[SurveyHit], vectors: Vectors, topic: str) -> list[Theme]:
    """The list clustered by itself, each group named against the rest of the list."""
    found = vectors([h.paper.id for h in hits])
    kept = [h for h in hits if h.paper.id in found]
    if len(kept) < SPLIT_FROM:
        return []
    matrix = np.stack([found[h.paper.id] for h in kept])
    k = max(2, min(MAX_THEMES, round(math.sqrt(len(kept) / 2))))
    labels = tp.kmeans(matrix, k)
    marks, vocab = tp.term_marks([h.paper.text for h in kept])
    names = tp.ctfidf_names(marks, vocab, labels, said=[[topic]] * k)
    groups: dict[int, list[SurveyHit]] = {}
    for hit, label in zip(kept, labels):
        groups.setdefault(int(label), []).append(hit)
    missing = [h for h in hits if h.paper.id not in found]
    pairs = [(" · ".join(names[c]) or OTHER, v) for c, v in groups.items()]
    return _groups(pairs + ([(OTHER, missing)] if missing else []))


def spread(results: list[SearchResult], themes: Sequence[Theme]) -> list[SearchResult]:
    """The results with the best-ranked one of each theme first (in rank order), then the rest:
    the few papers the model reads for a survey's synthesis come from its themes, not all from
    the one the top of the ranking falls in."""
    theme_of = {h.paper.id: i for i, t in enumerate(themes) if t.name != OTHER for h in t.hits}
    seen: set[int] = set()
    first, rest = [], []
    for r in results:
        theme = theme_of.get(r.paper.id)
        if theme is not None and theme not in seen:
            seen.add(theme)
            first.append(r)
        else:
            rest.append(r)
    return [replace(r, rank=i) for i, r in enumerate(first + rest, 1)]
