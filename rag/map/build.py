"""Lay out and name the papers of an index once, keep the result beside it, and build it again
only when an ingest has changed the papers.

A paper is placed by the mean of its chunk vectors (each chunk's vector already leans toward the
paper's title, see chunking.chunk_vectors), reduced to 50 dimensions by PCA and laid out in 2-D by
t-SNE (scikit-learn, already installed with sentence-transformers: no new dependency). Topics and
themes are clustered by meaning into regions of that picture (rag/map/regions.py) and named by
their own words (rag/map/topics.py)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag.index.records import paper_from_meta
from rag.index.store import Store, StoreError
from rag.map import colours
from rag.map import regions as rg
from rag.map import topics as tp
from rag.map.model import MAP_VERSION, Cluster, ConferenceMap, MapPaper
from rag.question.said import shown_status
from rag.types import Paper

log = logging.getLogger(__name__)
Progress = Callable[[str], None]  # told the name of each step as it starts
PERPLEXITY = 30
MAP_FILE = "map.json"
PAGE = 5000


def map_folder(settings, store: Store) -> Path:
    """Where the settings keep the map of `store` (settings.map.folder, else <data_dir>/map/<collection>)."""
    return settings.map.folder or settings.data_dir / "map" / store.name


def signature(store: Store) -> str:
    """Changes whenever an ingest writes to the index (each finished write stamps a new generation)."""
    return f"v{MAP_VERSION}:{store.generation()}"


def current_map(folder: Path, store: Store) -> ConferenceMap | None:
    """The map kept in `folder` if it was made from the index as it is now, else None."""
    if not store.exists():
        return None
    kept = ConferenceMap.load(folder / MAP_FILE)
    return kept if kept is not None and kept.signature == signature(store) else None


_BUILDING = threading.Lock()  # one layout at a time in a process (two chat users opening the Map tab)


def ensure_map(folder: Path, store: Store, progress: Progress | None = None) -> ConferenceMap:
    """The current map, built and kept first if there is none."""
    with _BUILDING:
        return current_map(folder, store) or build_map(folder, store, progress)


def build_map(folder: Path, store: Store, progress: Progress | None = None) -> ConferenceMap:
    """Lay out, cluster and name every paper of `store`, and keep the map in `folder`."""
    say = progress or (lambda step: None)
    start = time.perf_counter()
    if not store.exists():
        raise StoreError("The index is empty: run `citewise ingest` first.")
    stamp = signature(store)
    say("reading vectors")
    papers, vectors = paper_vectors(store)
    if not papers:
        raise StoreError("The index has no papers: run `citewise ingest` first.")
    say("laying out")
    xy = layout(vectors)
    say("clustering")
    topic, theme = rg.regions(vectors, xy, tp.topic_count(len(papers)), tp.theme_count(len(papers)))
    say("naming")
    marks, vocab = tp.term_marks([p.text for p in papers])
    topic_words = tp.ctfidf_names(marks, vocab, topic, distinct=True)
    parents = [int(topic[np.flatnonzero(theme == t)[0]]) for t in range(int(theme.max()) + 1)]
    topic_colours = colours.assign(rg.touching(xy, topic))
    theme_words = tp.ctfidf_names(marks, vocab, theme, said=[topic_words[p] for p in parents])
    result = ConferenceMap(
        signature=stamp,
        papers=[
            MapPaper(
                p.id,
                p.display_title,
                p.url,
                str((p.extra or {}).get("primary_area", "")),
                shown_status(p.status),  # a reader's word: OpenReview's "submitted" is a rejection
                round(float(x), 4),
                round(float(y), 4),
                int(a),
                int(b),
            )  # fmt: skip
            for p, (x, y), a, b in zip(papers, xy, topic, theme)
        ],
        topics=_clusters(topic, xy, topic_words, None, topic_colours),
        themes=_clusters(theme, xy, theme_words, parents, [topic_colours[p] for p in parents]),
        info={
            "venue": _venue(papers),
            "papers": len(papers),
            "topics": int(topic.max()) + 1,
            "themes": int(theme.max()) + 1,
            "layout": "PCA 50 + t-SNE",
            "clusters": "Ward on the vectors, merging only map neighbours; topics and themes cut from one tree",
        },  # fmt: skip
    )
    result.seconds = round(time.perf_counter() - start, 2)
    try:
        result.save(folder / MAP_FILE)
    except OSError as exc:  # a read-only data folder: the map serves this once, unkept
        log.warning("the map could not be kept in %s: %s", folder, exc)
    return result


def paper_vectors(store: Store) -> tuple[list[Paper], np.ndarray]:
    """Every paper (from its first chunk's record) and the unit mean of its chunk vectors."""
    sums: dict[str, np.ndarray] = {}
    records: dict[str, Paper] = {}
    col = store.collection
    offset = 0
    while True:
        page = col.get(include=["metadatas", "embeddings"], limit=PAGE, offset=offset)
        if not page["ids"]:
            break
        _add(sums, records, page)
        offset += len(page["ids"])
    ids = sorted(records)  # the same index gives the same order, so the same map
    if not ids:
        return [], np.zeros((0, 0), np.float32)
    matrix = np.stack([sums[i] for i in ids])
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return [records[i] for i in ids], matrix


def vectors_of(store: Store, paper_ids: Sequence[str]) -> dict[str, np.ndarray]:
    """The unit mean chunk vector of each of `paper_ids` that is stored (as in the map)."""
    if not paper_ids:
        return {}
    sums: dict[str, np.ndarray] = {}
    page = store.collection.get(
        where={"paper_id": {"$in": list(paper_ids)}}, include=["metadatas", "embeddings"]
    )
    _add(sums, {}, page)
    return {pid: v / max(float(np.linalg.norm(v)), 1e-12) for pid, v in sums.items()}


def _add(sums: dict[str, np.ndarray], records: dict[str, Paper], page) -> None:
    for meta, vector in zip(page["metadatas"], page["embeddings"]):
        pid = meta["paper_id"]
        v = np.asarray(vector, dtype=np.float32)
        sums[pid] = sums[pid] + v if pid in sums else v
        if "paper" in meta:
            records[pid] = paper_from_meta(meta)


class KeptMap:
    """The map kept in a folder, read again only when its file changes: an answer groups its list
    by it without reading 3 MB each time. A map older than the index still places the papers it
    has; the others are grouped under "Other papers" until it is laid out again."""

    def __init__(self, folder: Path):
        self.path = folder / MAP_FILE
        self._stamp: tuple[int, int] | None = None
        self._map: ConferenceMap | None = None

    def get(self) -> ConferenceMap | None:
        try:
            info = self.path.stat()
        except OSError:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp != self._stamp:
            self._map, self._stamp = ConferenceMap.load(self.path), stamp
        return self._map


def layout(vectors: np.ndarray) -> np.ndarray:
    """2-D positions in [0, 1]: t-SNE of the vectors' first 50 principal components (PCA alone
    below 10 papers, where t-SNE has too few neighbours to go by)."""
    from sklearn.decomposition import PCA

    n = len(vectors)
    if n < 3:
        return np.full((n, 2), 0.5, dtype=np.float32)
    reduced = PCA(min(50, n - 1, vectors.shape[1]), random_state=tp.SEED).fit_transform(vectors)
    if n < 10:
        xy = reduced[:, :2] if reduced.shape[1] >= 2 else np.column_stack([reduced[:, 0], np.zeros(n)])
    else:
        from sklearn.manifold import TSNE

        perplexity = min(PERPLEXITY, (n - 1) / 3)
        xy = TSNE(2, init="pca", perplexity=perplexity, random_state=tp.SEED, max_iter=750).fit_transform(
            reduced
        )
    span = np.maximum(xy.max(axis=0) - xy.min(axis=0), 1e-9)
    return ((xy - xy.min(axis=0)) / span).astype(np.float32)


def _clusters(
    labels: np.ndarray, xy: np.ndarray, words: list[list[str]], parents: list[int] | None, paint: list[str]
) -> list[Cluster]:
    out = []
    for c, (x, y) in enumerate(rg.anchors(xy, labels)):
        rows = np.flatnonzero(labels == c)
        out.append(Cluster(c, words[c], len(rows), round(float(x), 4), round(float(y), 4),
                           parents[c] if parents is not None else None, paint[c]))  # fmt: skip
    return out


def _venue(papers: list[Paper]) -> str:
    """The venue most papers name ("" when none does)."""
    from collections import Counter

    named = Counter(p.venue for p in papers if p.venue).most_common(1)
    return named[0][0] if named else ""
