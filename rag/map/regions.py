"""Topics and themes as regions of the picture.

A reader finds a topic on the map by its colour: that works only when a topic's papers sit
together. k-means in the full vectors (the map before 2026-12-06) gave topics whose papers were
spread over the picture: on the conference, 13 of 20 topics had under 0.8 of their papers in their
own region. Here the papers are clustered by meaning (Ward linkage on their vectors) but two
clusters may merge only if they touch on the map (a k-nearest-neighbour graph of the layout), so
each cluster grows as one piece. One tree gives both levels: cut at the number of topics, then at
the number of themes, so each theme sits inside one topic. A last pass gives each paper the topic
most of its neighbours on the map have (the few boundary papers a reader would see as specks of
another colour). Measured in docs/evaluation.md, "The conference map"."""

from __future__ import annotations

import warnings

import numpy as np

NEIGHBOURS = 30  # map neighbours a cluster may merge across (15: min share 0.92, 30: 0.98)
SMOOTHING = 15  # map neighbours a paper's topic is voted by in the last pass
MIN_THEME = 3  # papers: a smaller piece of a theme cut by the topic border joins a neighbour


def regions(vectors: np.ndarray, xy: np.ndarray, topics: int, themes: int) -> tuple[np.ndarray, np.ndarray]:
    """(topic, theme) of each paper: `topics` regions, each split into themes (about `themes` in
    all; numbers are global, topic 0 the largest)."""
    n = len(vectors)
    if n < 3 or topics <= 1:
        return np.zeros(n, np.int32), _one_level(vectors, xy, themes)
    children = _tree(vectors, xy)
    topic = by_size(smooth(xy, cut(children, n, min(topics, n))))
    theme = _nest(xy, topic, cut(children, n, min(max(themes, topics), n)))
    return topic, theme


def _one_level(vectors: np.ndarray, xy: np.ndarray, themes: int) -> np.ndarray:
    n = len(vectors)
    if n < 3 or themes <= 1:
        return np.zeros(n, np.int32)
    return by_size(cut(_tree(vectors, xy), n, min(themes, n)))


def _tree(vectors: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """The merges of Ward clustering restricted to neighbours on the map (sklearn's children_)."""
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.neighbors import kneighbors_graph

    graph = kneighbors_graph(xy, min(NEIGHBOURS, len(xy) - 1), include_self=False)
    with warnings.catch_warnings():  # islands of the layout: sklearn joins them itself, and says so
        warnings.simplefilter("ignore")
        model = AgglomerativeClustering(
            n_clusters=1, connectivity=graph, linkage="ward", compute_full_tree=True
        ).fit(vectors)
    return model.children_


def cut(children: np.ndarray, n: int, k: int) -> np.ndarray:
    """Cluster of each of the `n` leaves after the first n - k merges of `children`."""
    parent = np.arange(2 * n - 1)
    for j in range(n - k):
        parent[children[j]] = n + j
    root = np.arange(n)
    while True:
        up = parent[root]
        if np.array_equal(up, root):
            break
        root = up
    return np.unique(root, return_inverse=True)[1].astype(np.int32)


def smooth(xy: np.ndarray, labels: np.ndarray, k: int = SMOOTHING, rounds: int = 10) -> np.ndarray:
    """Each paper takes the label most of its k map neighbours (and itself) have, until none moves."""
    from sklearn.neighbors import NearestNeighbors

    k = min(k, len(xy) - 1)
    if k < 2:
        return labels
    idx = NearestNeighbors(n_neighbors=k + 1).fit(xy).kneighbors(xy, return_distance=False)
    rows = np.arange(len(labels))
    for _ in range(rounds):
        votes = np.zeros((len(labels), int(labels.max()) + 1))
        for j in range(k + 1):
            np.add.at(votes, (rows, labels[idx[:, j]]), 1)
        votes[rows, labels] += 0.5  # a tie keeps the paper where it is
        moved = votes.argmax(axis=1).astype(np.int32)
        if np.array_equal(moved, labels):
            break
        labels = moved
    return labels


def _nest(xy: np.ndarray, topic: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Themes cut by the topic border: a theme is one (topic, cluster) pair; a sliver of fewer than
    MIN_THEME papers joins the theme of its nearest paper in the same topic."""
    pair = topic.astype(np.int64) * (int(raw.max()) + 1) + raw
    sizes = dict(zip(*np.unique(pair, return_counts=True)))
    small = np.array([sizes[p] < MIN_THEME for p in pair])
    for t in np.unique(topic[small]):
        big = np.flatnonzero((topic == t) & ~small)
        if len(big) == 0:
            continue
        for i in np.flatnonzero((topic == t) & small):
            pair[i] = pair[big[np.argmin(((xy[big] - xy[i]) ** 2).sum(axis=1))]]
    # Numbered topic by topic, largest theme first within each.
    kept, counts = np.unique(pair, return_counts=True)
    width = int(raw.max()) + 1
    order = [int(p) for _, _, p in sorted(zip(kept // width, -counts, kept))]
    number = {p: i for i, p in enumerate(order)}
    return np.array([number[p] for p in pair], dtype=np.int32)


def by_size(labels: np.ndarray) -> np.ndarray:
    """Renumber clusters largest first (cluster 0 is the biggest)."""
    _, labels = np.unique(labels, return_inverse=True)
    order = np.argsort(-np.bincount(labels), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[labels].astype(np.int32)


def anchors(xy: np.ndarray, labels: np.ndarray, k: int = 20) -> list[tuple[float, float]]:
    """Where each cluster's name goes: among its papers whose map neighbours are mostly its own,
    the one nearest their median (the median of all its papers can fall in another region)."""
    from sklearn.neighbors import NearestNeighbors

    count = int(labels.max()) + 1 if len(labels) else 0
    k = min(k, len(xy) - 1)
    own = np.ones(len(xy))
    if k >= 2:
        idx = NearestNeighbors(n_neighbors=k + 1).fit(xy).kneighbors(xy, return_distance=False)
        own = (labels[idx] == labels[:, None]).mean(axis=1)
    out = []
    for c in range(count):
        rows = np.flatnonzero(labels == c)
        inner = rows[own[rows] >= min(0.9, own[rows].max())]
        centre = np.median(xy[inner], axis=0)
        best = inner[np.argmin(((xy[inner] - centre) ** 2).sum(axis=1))]
        out.append((float(xy[best, 0]), float(xy[best, 1])))
    return out


def region_share(xy: np.ndarray, labels: np.ndarray, grid: int = 64, k: int = 10) -> np.ndarray:
    """For each cluster, the share of its papers inside its own region: the map is cut into a
    grid x grid raster, each cell goes to the cluster most of its k nearest papers are in, and a
    cluster's region is its largest connected piece of cells. 1.0 = every paper in one piece."""
    from scipy import ndimage
    from sklearn.neighbors import NearestNeighbors

    k = min(k, len(xy))
    centres = (
        np.stack(np.meshgrid(np.arange(grid), np.arange(grid), indexing="ij"), -1).reshape(-1, 2) + 0.5
    ) / grid
    idx = NearestNeighbors(n_neighbors=k).fit(xy).kneighbors(centres, return_distance=False)
    count = int(labels.max()) + 1
    votes = np.zeros((len(centres), count))
    for j in range(k):
        np.add.at(votes, (np.arange(len(centres)), labels[idx[:, j]]), 1)
    cells = votes.argmax(axis=1).reshape(grid, grid)
    at = np.clip((xy * grid).astype(int), 0, grid - 1)
    shares = np.zeros(count)
    for c in range(count):
        pieces, found = ndimage.label(cells == c)
        mine = pieces[at[labels == c, 0], at[labels == c, 1]]
        if found and (mine > 0).any():
            shares[c] = np.bincount(mine[mine > 0]).max() / (labels == c).sum()
    return shares


def touching(xy: np.ndarray, labels: np.ndarray, k: int = 10) -> np.ndarray:
    """clusters x clusters: how many map-neighbour pairs join each two clusters (the diagonal 0)."""
    from sklearn.neighbors import NearestNeighbors

    count = int(labels.max()) + 1
    out = np.zeros((count, count), dtype=np.int64)
    k = min(k, len(xy) - 1)
    if k < 1:
        return out
    idx = NearestNeighbors(n_neighbors=k + 1).fit(xy).kneighbors(xy, return_distance=False)
    np.add.at(out, (np.repeat(labels, k), labels[idx[:, 1:]].ravel()), 1)
    np.fill_diagonal(out, 0)
    return out + out.T
