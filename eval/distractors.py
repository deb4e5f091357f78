"""Distractor abstracts: the seed papers' fields and vocabulary without their facts.

A whole conference holds many papers on the topics of any question. To measure how citewise holds
up among them, each distractor is written from seed sentences used as templates: every name is
replaced by an invented one unless several seed papers use it (kept consistent within the abstract,
as a real abstract repeats its method's name), every number by another of the same shape, and a
share of the content words by other seed words of the same ending (so the text stays in the field
and reads like a sentence).

Each distractor is related to one seed paper, as a conference holds papers related to any paper:
its title is written from that paper's title and half of its replacement words come from that
paper's words. Its sentences are not that paper's: each comes from another seed paper, one per
paper, taken at the same place in its abstract (opening, method, result). Until round 18 half of
a distractor's sentences were its related paper's own, rewritten: a twin with the same sentence
structure, which no real conference holds and which retrieval cannot tell from the original
(docs/evaluation.md, rounds 13 to 15 and 19).

Then the set is checked:

- no distractor sentence is a near copy of a seed sentence: cosine similarity <= 0.9 with the
  embedder; a sentence above that is rewritten with more words replaced, or dropped;
- no distractor title is a near copy of a seed title or sentence, by the same measure: a title above
  it is rewritten with more words replaced, the last time from every seed paper's words rather than
  its related paper's. Until round 22 (corpus v2) titles went unchecked, and 242 of the 10,000 were
  a seed title all but word for word ("Offline hierarchical reinforcement learning via inverse
  optimization"): a second copy of a seed paper under its own title;
- no distractor sentence states a distinctive gold fact (a number or name among the variants of
  the required facts of the gold set); such a sentence is rewritten like a too-close one;
- how close each distractor is to its nearest seed paper as a whole (the cosine of the mean of its
  sentence vectors to each seed paper's), recorded to compare with how close the seed papers are
  to each other.

Generation is deterministic per (seed, index), so the first 1,000 of the 10,000 are the 1,000.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rag import text as tx
from rag.index.embedding import Embedder
from rag.types import Paper

MAX_COSINE = 0.9
COMMON_NAME_PAPERS = 3  # a name in this many seed papers is kept as it is
SWAP_RATES = (0.45, 0.7, 0.9)  # content-word replacement rate, raised for a too-close sentence
# A title's rate and whether half its words come from its related paper, raised for a too-close one
TITLE_RATES = ((0.6, True), (0.9, True), (1.0, False))
SYLLABLES = "ka lo ri ven tor mi sa qu el dra no fen zu bar ti os lum pex ra vo gan hel cy mar".split()
ENDINGS = ("ation", "ition", "ment", "ness", "ity", "ing", "ed", "ly", "al", "ive", "ous", "ics", "es", "s")
_TOKEN = re.compile(r"[A-Za-z][\w]*(?:[-.:/][\w]+)*|\d+(?:[.,]\d+)*|\s+|.", re.S)


@dataclass
class DistractorStats:
    """What the checks found: the corpus is only used when `max_cosine` <= MAX_COSINE."""

    papers: int
    sentences: int
    rewritten: int  # sentences that failed a check at the first rate, rewritten with more swaps
    stated_fact: int  # of those, how many stated a distinctive gold fact
    dropped: int  # still failing at the highest rate: left out
    max_cosine: float
    titles_rewritten: int  # titles that were near copies at the first rate
    title_max_cosine: float  # the closest title to a seed title or sentence, after rewriting
    # each distractor to its nearest seed paper as a whole, and each seed paper to its nearest other
    paper_cosine_p50: float
    paper_cosine_max: float
    seed_paper_cosine_p50: float
    seed_paper_cosine_max: float


def _ending(word: str) -> str:
    return next((e for e in ENDINGS if word.endswith(e)), "")


def _invented(rng: random.Random) -> str:
    parts = [rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))]
    style = rng.random()
    if style < 0.4:
        return "".join(p.capitalize() for p in parts)  # CamelCase: KaloVen
    if style < 0.7:
        return "".join(p[0].upper() for p in parts) + rng.choice(("", "-2", "-X", "Net"))  # KVR-2
    return "".join(parts).capitalize() + "-" + rng.choice(SYLLABLES).capitalize()  # Kaloven-Tor


def _number(token: str, rng: random.Random) -> str:
    """Another number of the same shape: digits for digits, the decimal places kept."""
    out = token
    while out == token:
        out = "".join(
            str(rng.randint(1 if i == 0 and len(token) > 1 else 0, 9)) if c.isdigit() else c
            for i, c in enumerate(token)
        )
    return out


class Rewriter:
    """Templates from the seed abstracts, rewritten into new sentences."""

    def __init__(self, papers: Sequence[Paper], facts: Iterable[str] = ()):
        self.papers = list(papers)
        # Names in several seed papers ("LLMs", "GPT-4", "ImageNet") are the field's vocabulary, as
        # in any conference: kept, unless a gold fact is made of them. The rest are invented anew.
        seen: dict[str, int] = defaultdict(int)
        for p in self.papers:
            for name in tx.names(p.abstract):
                seen[name] += 1
        # `names` skips a sentence's first word (capitalized anyway): a lead word makes a fact's first
        # word count too ("ImageNet" alone is a name).
        in_facts = {n for f in facts for n in tx.names(f"x {f}")}
        self.common = {n for n, count in seen.items() if count >= COMMON_NAME_PAPERS} - in_facts
        self.sentences = [
            [s for s in tx.sentences(p.abstract) if 5 <= len(s.split()) <= 70 and "http" not in s]
            for p in self.papers
        ]
        self.topics = [_pools([p.title.lower(), p.abstract]) for p in self.papers]
        self.pools = _pools(p.abstract for p in self.papers)

    def sentence(
        self, template: str, rng: random.Random, names: dict[str, str], rate: float, topic: int | None = None
    ) -> str:
        """`template` rewritten; with `topic`, half the replacement words come from that paper."""
        out = []
        for i, tok in enumerate(_TOKEN.findall(template)):
            if tok[0].isdigit():
                out.append(_number(tok, rng))
            elif tok in self.common:
                out.append(tok)
            elif tok[0].isalpha() and (tx.is_name(tok) or (i > 0 and tok[0].isupper() and len(tok) > 2)):
                out.append(names.setdefault(tok, _invented(rng)))
            elif tok.isalpha() and tok.islower() and len(tok) >= 4 and tok not in tx.STOP_WORDS:
                pools = self.topics[topic] if topic is not None and rng.random() < 0.5 else self.pools
                pool = pools.get(_ending(tok)) or self.pools.get(_ending(tok), ())
                out.append(rng.choice(pool) if pool and rng.random() < rate else tok)
            else:
                out.append(tok)
        return "".join(out)

    def title(
        self,
        template: str,
        rng: random.Random,
        names: dict[str, str],
        topic: int | None = None,
        rate: float = 0.6,
    ) -> str:
        # Title case would make every word look like a name: lower the plain words first.
        plain = " ".join(w if tx.is_name(w) else w.lower() for w in template.split())
        text = self.sentence(plain, rng, names, rate, topic)
        return text[:1].upper() + text[1:]

    def related(self, index: int) -> int:
        """The seed paper distractor `index` is related to."""
        return index % len(self.papers)

    def plan(self, index: int, seed: int) -> tuple[str, list[str]]:
        """The title template and sentence templates of distractor `index`: its related paper's
        title, and as many sentences as that paper has, each from another seed paper (one per
        paper) at the same place in its abstract."""
        rng = random.Random(f"{seed}:{index}")
        primary = self.related(index)
        own = self.sentences[primary]
        others = [k for k, ss in enumerate(self.sentences) if ss and k != primary]
        donors = rng.sample(others, min(len(own), len(others)))
        chosen = []
        for j, k in enumerate(donors):
            theirs = self.sentences[k]
            chosen.append(theirs[min(len(theirs) - 1, j * len(theirs) // len(own))])
        return self.papers[primary].title or own[0], chosen


def _pools(texts: Iterable[str]) -> dict[str, list[str]]:
    """The content words of `texts` by ending (see `_ending`)."""
    pools: dict[str, set[str]] = defaultdict(set)
    for text in texts:
        for w in re.findall(r"\b[a-z]{4,}\b", text):
            if w not in tx.STOP_WORDS:
                pools[_ending(w)].add(w)
    return {k: sorted(v) for k, v in pools.items()}


def generate(
    n: int,
    papers: Sequence[Paper],
    embedder: Embedder,
    facts: Iterable[str] = (),
    *,
    seed: int = 0,
) -> tuple[list[dict], DistractorStats]:
    """N distractor records ({id, title, abstract, venue}) and the checks' findings."""
    facts = list(facts)
    rewriter = Rewriter(papers, facts)
    seed_vectors = _unit(embedder.embed_batch([s for ss in rewriter.sentences for s in ss]))
    states_fact = _fact_finder(facts)
    plans = [rewriter.plan(i, seed) for i in range(n)]
    names: list[dict[str, str]] = [{} for _ in range(n)]  # one invented name per original, per paper

    def write_sentence(i: int, j: int, level: int) -> str:
        rng = random.Random(f"{seed}:{i}:{j}:{level}")
        return rewriter.sentence(plans[i][1][j], rng, names[i], SWAP_RATES[level], rewriter.related(i))

    keep = {(i, j): write_sentence(i, j, 0) for i in range(n) for j in range(len(plans[i][1]))}

    def write_title(i: int, level: int) -> str:
        rng = random.Random(f"{seed}:{i}:t" + (f":{level}" if level else ""))
        rate, related = TITLE_RATES[level]
        return rewriter.title(plans[i][0], rng, names[i], rewriter.related(i) if related else None, rate)

    # Written here, before any sentence is rewritten, so the sentences' invented names are as before.
    titles = {i: write_title(i, 0) for i in range(n)}
    cosine: dict[tuple[int, int], float] = {}
    vectors: dict[tuple[int, int], object] = {}
    pending = list(keep)
    rewritten = stated = 0
    for level in range(len(SWAP_RATES)):
        if level:  # rewrite the failing sentences afresh, with more words replaced
            rewritten += len(pending) if level == 1 else 0
            keep.update({k: write_sentence(*k, level) for k in pending})
        found, unit = _max_cosine(embedder, [keep[k] for k in pending], seed_vectors)
        cosine.update(zip(pending, found))
        vectors.update(zip(pending, unit))
        failing = [k for k in pending if cosine[k] > MAX_COSINE or states_fact(keep[k])]
        stated += sum(states_fact(keep[k]) for k in failing) if level == 0 else 0
        pending = failing
        if not pending:
            break
    for k in pending:
        del keep[k]
    titles_rewritten, title_max = _check_titles(titles, write_title, embedder, rewriter, seed_vectors)
    records = []
    for i, (_, templates) in enumerate(plans):
        text = " ".join(keep[(i, j)] for j in range(len(templates)) if (i, j) in keep)
        records.append(
            {"id": f"dis-{seed}-{i:06d}", "title": titles[i], "abstract": text, "venue": "distractor"}
        )
    stats = DistractorStats(
        papers=n,
        sentences=len(keep),
        rewritten=rewritten,
        stated_fact=stated,
        dropped=len(pending),
        max_cosine=round(max((cosine[k] for k in keep), default=0.0), 4),
        titles_rewritten=titles_rewritten,
        title_max_cosine=title_max,
        **_paper_closeness(
            rewriter.sentences,
            seed_vectors,
            [[vectors[(i, j)] for j in range(len(t)) if (i, j) in keep] for i, (_, t) in enumerate(plans)],
        ),
    )
    return records, stats


def _check_titles(
    titles: dict[int, str], write, embedder: Embedder, rewriter: Rewriter, seed_vectors
) -> tuple[int, float]:
    """Rewrite, in place, each title closer than MAX_COSINE to a seed title or sentence, at the
    next level of `TITLE_RATES` (`write(i, level)`); the last level's title is kept as it is.
    Returns how many titles were rewritten and the highest cosine left."""
    import numpy as np

    seed_titles = [p.title for p in rewriter.papers if p.title]
    against = (
        np.vstack([_unit(embedder.embed_batch(seed_titles)), seed_vectors]) if seed_titles else seed_vectors
    )
    cosine: dict[int, float] = {}
    near = list(titles)
    rewritten = 0
    for level in range(len(TITLE_RATES)):
        if level:
            rewritten += len(near) if level == 1 else 0
            titles.update({i: write(i, level) for i in near})
        found, _ = _max_cosine(embedder, [titles[i] for i in near], against)
        cosine.update(zip(near, found))
        near = [i for i in near if cosine[i] > MAX_COSINE]
        if not near:
            break
    return rewritten, round(max(cosine.values(), default=0.0), 4)


def _fact_finder(facts: Iterable[str]):
    """A test for "this sentence states one of these facts", matched as `eval.metrics.contains`
    matches them, compiled once (~10^5 sentences against ~10^2 variants). Only distinctive facts
    count, those with a digit or a capital letter (numbers, names): plain words such as "image" or
    "entropy" are the field's vocabulary, which distractors are meant to share."""
    from eval.metrics import normalize, variant_pattern

    distinctive = [f for f in facts if re.search(r"[0-9A-Z]", f)]
    alternatives = sorted({p for p in map(variant_pattern, distinctive) if p})
    if not alternatives:
        return lambda _text: False
    pattern = re.compile("|".join(alternatives))
    return lambda text: pattern.search(normalize(text)) is not None


def _unit(vectors):
    import numpy as np

    array = np.asarray(vectors, dtype="float32")
    return array / np.maximum(np.linalg.norm(array, axis=1, keepdims=True), 1e-9)


def _max_cosine(embedder: Embedder, sentences: list[str], seed_vectors) -> tuple[list[float], list]:
    """Each sentence's highest cosine to a seed sentence, and its unit vector."""
    out: list[float] = []
    units: list = []
    for start in range(0, len(sentences), 2048):
        vectors = _unit(embedder.embed_batch(sentences[start : start + 2048]))
        out += (vectors @ seed_vectors.T).max(axis=1).tolist()
        units += list(vectors)
    return out, units


def _paper_closeness(seed_sentences: list[list[str]], seed_vectors, distractors: list[list]) -> dict:
    """How close papers are as wholes (the cosine of the means of their sentence vectors): each
    distractor to its nearest seed paper, and each seed paper to its nearest other seed paper, as
    medians and maxima."""
    import numpy as np

    def means(groups):
        return _unit([np.mean(g, axis=0) if len(g) else np.zeros(seed_vectors.shape[1]) for g in groups])

    bounds = np.cumsum([0] + [len(ss) for ss in seed_sentences])
    seeds = means([seed_vectors[a:b] for a, b in zip(bounds[:-1], bounds[1:])])
    among = seeds @ seeds.T
    np.fill_diagonal(among, -1.0)
    nearest_seed = among.max(axis=1)
    nearest = (means(distractors) @ seeds.T).max(axis=1) if distractors else np.zeros(1)
    return {
        "paper_cosine_p50": round(float(np.median(nearest)), 4),
        "paper_cosine_max": round(float(nearest.max()), 4),
        "seed_paper_cosine_p50": round(float(np.median(nearest_seed)), 4),
        "seed_paper_cosine_max": round(float(nearest_seed.max()), 4),
    }


def write(path: Path, records: list[dict], stats: DistractorStats) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    tmp.replace(path)
    path.with_suffix(".stats.json").write_text(json.dumps(asdict(stats), indent=1))
