"""Topics at two levels, and their names.

Broad topics are spherical k-means clusters of the papers' vectors; each topic is split again by
k-means into themes, so a theme always sits inside one topic (the map colours topics and labels
both). k grows with the corpus: about sqrt(n / 30) topics (20 for the 11,668 ICLR 2025 papers) and
one theme per ~40 papers of a topic. Names are the terms most distinctive of a cluster, a class-based TF-IDF in the manner of
BERTopic's c-TF-IDF: with p the share of the cluster's papers that say a term and q the share of
all papers, a term scores p log(p / q). Words every cluster uses ("model", "propose") score near
zero without a stop-word list of our own; BERTopic's own weighting, tf log(1 + A / f), named the
broad topics "data · learning · training" and "models · model · performance" here."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from rag import text as tx

PAPERS_PER_THEME = 40
MAX_TOPICS = 30
NAME_TERMS = 3  # words or two-word phrases in a name
SEED = 0  # the same papers get the same clusters
URL = re.compile(r"\b(?:https?://|www\.)\S+|\S+\.(?:com|org|io|net)/\S*")


def topic_count(n: int) -> int:
    if n < 8:
        return 1
    return max(2, min(MAX_TOPICS, round(math.sqrt(n / 30))))


def kmeans(vectors: np.ndarray, k: int) -> np.ndarray:
    from sklearn.cluster import KMeans

    k = max(1, min(k, len(vectors)))
    if k == 1:
        return np.zeros(len(vectors), dtype=np.int32)
    return KMeans(k, n_init=3, random_state=SEED).fit(vectors).labels_.astype(np.int32)


def two_levels(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(topic, theme) of each row of `vectors` (unit rows); theme numbers are global."""
    topic = kmeans(vectors, topic_count(len(vectors)))
    theme = np.zeros(len(vectors), dtype=np.int32)
    next_theme = 0
    for t in range(int(topic.max()) + 1):
        rows = np.flatnonzero(topic == t)
        k = max(1 if len(rows) < 10 else 2, round(len(rows) / PAPERS_PER_THEME))
        theme[rows] = kmeans(vectors[rows], k) + next_theme
        next_theme = int(theme[rows].max()) + 1
    return _by_size(topic), theme


def _by_size(labels: np.ndarray) -> np.ndarray:
    """Renumber clusters largest first (topic 0 is the biggest)."""
    order = np.argsort(-np.bincount(labels), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[labels].astype(np.int32)


def term_marks(texts: Sequence[str]):
    """Which words and two-word phrases each text says (a sparse 0/1 matrix) and the terms."""
    from sklearn.feature_extraction.text import CountVectorizer

    counter = CountVectorizer(
        stop_words="english",
        ngram_range=(1, 2),
        token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9-]{2,}\b",
        min_df=2 if len(texts) > 50 else 1,
        binary=True,  # a paper says a word or not: one paper repeating it does not name a cluster
    )
    try:
        # Web addresses name no topic ("https", "github" named one of the seed clusters).
        plain = [URL.sub(" ", t) for t in texts]
        return counter.fit_transform(plain).tocsr(), counter.get_feature_names_out()
    except ValueError:  # nothing but stop words
        return None, np.array([])


def ctfidf_names(
    marks,
    vocab: np.ndarray,
    labels: np.ndarray,
    terms: int = NAME_TERMS,
    said: Sequence[Sequence[str]] | None = None,
) -> list[list[str]]:
    """The `terms` most distinctive terms of each cluster (by label number), leaving out what
    `said[c]` already says of cluster c (a theme's name adds to its topic's)."""
    k = int(labels.max()) + 1 if len(labels) else 0
    if marks is None:
        return [[] for _ in range(k)]
    from scipy import sparse

    member = sparse.csr_matrix(
        (np.ones(len(labels)), (labels, np.arange(len(labels)))), shape=(k, len(labels))
    )
    tf = (member @ marks).tocsr().astype(np.float64)  # clusters x terms: its papers that say the term
    everywhere = np.asarray(tf.sum(axis=0)).ravel() / len(labels)
    rows = np.repeat(np.arange(k), np.diff(tf.indptr))
    sizes = np.maximum(np.bincount(labels, minlength=k), 1)[rows]
    inside = tf.data / sizes
    # A term only one paper says does not name a group of several (a title's own words).
    single = (tf.data < 2) & (sizes > 2)
    # Sparse all the way: a dense clusters x (words and phrases) table took 2 GB at 300 clusters.
    tf.data = inside * np.log(inside / np.maximum(everywhere[tf.indices], 1e-12))
    tf.data[single] = 0.0
    return [_pick(tf.getrow(c), vocab, terms, said[c] if said is not None else ()) for c in range(k)]


def without(words: Sequence[str], said: str) -> list[str]:
    """`words` (a name's terms) less those sharing a stem with `said`, unless none would remain:
    a theme of a list about "backdoor attacks" is named by what it adds to that."""
    taken = {_stem(w) for w in re.findall(r"[\w-]+", said)}
    kept = [t for t in words if not {_stem(w) for w in t.split()} & taken]
    return kept or list(words)


def _stem(word: str) -> str:
    return tx.stem(word.lower())  # the project's one stemmer (rag/text.py), not a new one per word


def _pick(row, vocab: np.ndarray, terms: int, said: Sequence[str] = ()) -> list[str]:
    """Best-scoring terms of a sparse row, skipping one whose words a chosen phrase already says
    (and the reverse)."""
    taken = {_stem(w) for term in said for w in term.split()}
    chosen: list[str] = []
    # On a tie a phrase goes first: "graph rewiring" says more than "graph" and "rewiring".
    phrases = np.array([str(vocab[i]).count(" ") for i in row.indices])
    for j in np.lexsort((-phrases, -np.round(row.data, 9)))[: terms * 10]:
        if row.data[j] <= 0:
            break
        term = str(vocab[row.indices[j]])
        words = {_stem(w) for w in term.split()}
        if words & taken or any(words & {_stem(w) for w in c.split()} for c in chosen):
            continue
        chosen.append(term)
        if len(chosen) == terms:
            break
    return chosen
