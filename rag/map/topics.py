"""How many topics, and their names (the regions themselves: rag/map/regions.py).

k grows with the corpus: about sqrt(n / 30) topics (20 for the 11,668 ICLR 2025 papers) and one
theme per ~40 papers. Names are the terms most distinctive of a cluster, a class-based TF-IDF in the manner of
BERTopic's c-TF-IDF: with p the share of the cluster's papers that say a term and q the share of
all papers, a term scores p log(p / q). Words every cluster uses ("model", "propose") score near
zero without a stop-word list of our own; BERTopic's own weighting, tf log(1 + A / f), named the
broad topics "data · learning · training" and "models · model · performance" here.

Topic names must tell topics apart: a word names one topic only (the topic where it scores
highest takes it), and a name word is at least LIFT times as common in its cluster as in all
papers, so a broad topic is not named by the words every paper says ("data · learning")."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from rag import text as tx

PAPERS_PER_THEME = 40
MAX_TOPICS = 30
NAME_TERMS = 3  # words or two-word phrases in a name
LIFT = 2.0  # a topic name's word: at least twice as common in the topic as in all papers
SEED = 0  # the same papers get the same clusters
CLAUSE = re.compile(r"[.;:!?,()\[\]]+(?:\s|$)")  # where a two-word phrase cannot run on
URL = re.compile(r"\b(?:https?://|www\.)\S+|\S+\.(?:com|org|io|net)/\S*")


def theme_count(n: int) -> int:
    return max(1, round(n / PAPERS_PER_THEME))


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


def term_marks(texts: Sequence[str]):
    """Which words and two-word phrases each text says (a sparse 0/1 matrix) and the terms."""
    from sklearn.feature_extraction.text import CountVectorizer

    words = CountVectorizer(
        stop_words="english", ngram_range=(1, 2), token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9-]{2,}\b"
    ).build_analyzer()

    def terms(text: str) -> list[str]:
        # Phrases within a clause: "... graph rewiring. Large ..." says no "rewiring large".
        return [t for clause in CLAUSE.split(text) for t in words(clause)]

    counter = CountVectorizer(
        analyzer=terms,
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
    distinct: bool = False,
) -> list[list[str]]:
    """The `terms` most distinctive terms of each cluster (by label number), leaving out what
    `said[c]` already says of cluster c (a theme's name adds to its topic's). `distinct`: no word
    in two clusters' names, and only words at least LIFT times as common in the cluster."""
    k = int(labels.max()) + 1 if len(labels) else 0
    if marks is None:
        return [[] for _ in range(k)]
    scores = _scores(marks, labels, k, LIFT if distinct and k > 1 else 0.0)  # one cluster: lift 1
    if distinct:
        names = _distinct(scores, vocab, terms)
        # A cluster left with no word of its own still gets its best one (tiny corpora only).
        loose = _scores(marks, labels, k, 0.0)
        return [n or _pick(loose.getrow(c), vocab, 1) for c, n in enumerate(names)]
    return [_pick(scores.getrow(c), vocab, terms, said[c] if said is not None else ()) for c in range(k)]


def _scores(marks, labels: np.ndarray, k: int, lift: float):
    """Clusters x terms, sparse: p log(p / q), 0 where a term's lift p / q is under `lift`."""
    from scipy import sparse

    member = sparse.csr_matrix(
        (np.ones(len(labels)), (labels, np.arange(len(labels)))), shape=(k, len(labels))
    )
    tf = (member @ marks).tocsr().astype(np.float64)  # clusters x terms: its papers that say the term
    everywhere = np.asarray(tf.sum(axis=0)).ravel() / len(labels)
    rows = np.repeat(np.arange(k), np.diff(tf.indptr))
    sizes = np.maximum(np.bincount(labels, minlength=k), 1)[rows]
    inside = tf.data / sizes
    ratio = inside / np.maximum(everywhere[tf.indices], 1e-12)
    # A term only one paper says does not name a group of several (a title's own words).
    # A cluster of a large share of a small corpus cannot reach `lift` (a term only it says has
    # lift n / size): it is asked for half the way from 1 to what it could reach.
    needed = np.minimum(lift, (len(labels) / sizes + 1) / 2) if lift else 0.0
    dropped = ((tf.data < 2) & (sizes > 2)) | (ratio < needed)
    # Sparse all the way: a dense clusters x (words and phrases) table took 2 GB at 300 clusters.
    tf.data = inside * np.log(ratio)
    tf.data[dropped] = 0.0
    return tf


def _distinct(scores, vocab: np.ndarray, terms: int) -> list[list[str]]:
    """Names chosen best score first over all clusters: a word a cluster took is no other's."""
    k = scores.shape[0]
    coo = scores.tocoo()
    keep = coo.data > 0
    order = np.argsort(-coo.data[keep], kind="stable")
    rows, cols = coo.row[keep][order], coo.col[keep][order]
    owner: dict[str, int] = {}
    names: list[list[str]] = [[] for _ in range(k)]
    for c, j in zip(rows.tolist(), cols.tolist()):
        if len(names[c]) == terms:
            continue
        term = str(vocab[j])
        stems = name_keys(term)
        if any(owner.get(s, c) != c for s in stems):
            continue  # another cluster's name says it
        if any(stems & name_keys(t) for t in names[c]):
            continue  # its own name says it already ("graph" after "graph rewiring")
        names[c].append(term)
        owner.update(dict.fromkeys(stems, c))
    return names


def without(words: Sequence[str], said: str) -> list[str]:
    """`words` (a name's terms) less those sharing a stem with `said`, unless none would remain:
    a theme of a list about "backdoor attacks" is named by what it adds to that."""
    taken = {_stem(w) for w in re.findall(r"[\w-]+", said)}
    kept = [t for t in words if not {_stem(w) for w in t.split()} & taken]
    return kept or list(words)


def name_keys(term: str) -> set[str]:
    """The words of a term as names compare them: "llms" and "llm" are one word, and
    "long-context" says "context" ("retrieval · long-context · context" repeated itself)."""
    return {_stem(w).rstrip("s") for w in re.split(r"[\s-]+", term) if w}


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
