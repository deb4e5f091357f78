"""Is a candidate paper on the list? One learned decision over every signal, in place of a chain
of caps and per-path thresholds: how the paper was found (the topic's own words, a shorter form of
them, an alternative the question gives, a name the corpus defines for it, dense search), how much
and where its text names the topic, the membership judge's p, its cosine to the topic, dense rank,
and how sure the question reader was. A logistic regression over these, trained on the dev survey
lists (trainable papers only, `python -m eval.survey_decider`), shipped as its weights in JSON; one
threshold, chosen on dev, sets the trade-off between a long list and a clean one."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from rag import text as tx
from rag.index.aliases import is_short_form, singular
from rag.logistic import Logistic
from rag.types import Paper

WEIGHTS = Path(__file__).resolve().parent.parent / "judge" / "weights" / "survey-decider.json"
KINDS = ("topic", "relaxed", "also", "alias", "acronym", "dense")
FEATURES = (
    *(f"by_{k}" for k in KINDS),
    "only_dense",
    "title_topic",
    "title_any",
    "mentions_topic",
    "mentions_also",
    "mention_sentences",
    "first_mention",
    "acronym_only",
    "judge_logit",
    "cosine",
    "dense_rank",
    "list_size",
    "reader_confidence",
)


@dataclass
class Names:
    """A topic's names as the decision counts them: stem sequences of the topic (its own phrases
    and the long forms the corpus defines), of its alternatives, and acronyms as written."""

    topic: list[list[str]]
    also: list[list[str]] = field(default_factory=list)
    acronyms: list[str] = field(default_factory=list)


@dataclass
class Signals:
    """What is known of one candidate when the decision is made."""

    found_by: set[str]
    p: float  # the membership judge's p(about the topic)
    cosine: float  # of the topic to the paper's nearest sentence
    dense_rank: int | None  # 0 first; None when dense search did not offer it


def _count(stems: list[str], phrase: list[str]) -> int:
    n = len(phrase)
    if not n:
        return 0
    return sum(stems[i : i + n] == phrase for i in range(len(stems) - n + 1))


def mentions(text: str, names: Names) -> tuple[int, int, int]:
    """(mentions of the topic's names, of its alternatives, acronym mentions) in `text`. Phrases are
    counted at each occurrence; an acronym once per token form present ("MoE", "MoEs"), as the
    decision was trained."""
    stems = tx.keyword_terms(text)
    tokens = {t.strip(".,;:()[]") for t in text.split()}
    acronyms = sum(1 for a in names.acronyms for t in tokens if t in (a, a + "s"))
    topic = sum(_count(stems, p) for p in names.topic) + acronyms
    return topic, sum(_count(stems, p) for p in names.also), acronyms


def features(paper: Paper, names: Names, s: Signals, list_size: int, confidence: float,
             dense_depth: int) -> dict[str, float]:  # fmt: skip
    """The decision's inputs for one candidate (`FEATURES`)."""
    title_topic, title_also, _ = mentions(paper.title, names)
    sentences = tx.sentences(paper.abstract) or [paper.abstract]
    counts = [mentions(s_, names) for s_ in sentences]
    topic = title_topic + sum(c[0] for c in counts)
    also = title_also + sum(c[1] for c in counts)
    with_topic = [i for i, c in enumerate(counts) if c[0] or c[1]]
    acronym = sum(c[2] for c in counts)
    p = min(max(s.p, 1e-4), 1 - 1e-4)
    out = {f"by_{k}": float(k in s.found_by) for k in KINDS}
    out |= {
        "only_dense": float(s.found_by == {"dense"}),
        "title_topic": float(title_topic > 0),
        "title_any": float(title_topic + title_also > 0),
        "mentions_topic": math.log1p(topic),
        "mentions_also": math.log1p(also),
        "mention_sentences": len(with_topic) / len(sentences),
        "first_mention": (with_topic[0] / len(sentences)) if with_topic else 1.5,
        "acronym_only": float(acronym > 0 and acronym == topic - title_topic),
        "judge_logit": math.log(p / (1 - p)),
        "cosine": s.cosine,
        "dense_rank": (s.dense_rank / max(dense_depth, 1)) if s.dense_rank is not None else 1.5,
        "list_size": math.log1p(list_size),
        "reader_confidence": confidence,
    }
    return out


@dataclass(frozen=True)
class Decider:
    """A logistic regression over standardized `FEATURES`, and the threshold a paper's p needs."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float

    @cached_property
    def _model(self) -> Logistic:
        return Logistic(self.names, self.mean, self.scale, self.coef, self.intercept)

    def p(self, x: dict[str, float]) -> float:
        return self._model.p(x)

    def keeps(self, x: dict[str, float]) -> bool:
        return self.p(x) >= self.threshold

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in ("names", "mean", "scale", "coef", "intercept", "threshold")}

    @classmethod
    def from_json(cls, data: dict) -> Decider:
        decider = cls(
            **{k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k != "trained"}
        )
        missing = set(decider.names) - set(FEATURES)
        if missing:
            raise ValueError(f"survey decider: unknown features {sorted(missing)}")
        return decider


@lru_cache(maxsize=2)
def shipped_decider(path: Path = WEIGHTS) -> Decider | None:
    """The decision shipped with citewise (None when its weights are absent)."""
    if not path.exists():
        return None
    return Decider.from_json(json.loads(path.read_text()))


def names_of(topic_phrases: Sequence[str], long_forms: Sequence[str], also: Sequence[str],
             acronyms: Sequence[str]) -> Names:  # fmt: skip
    """The `Names` of a topic: a phrase that is one acronym ("NAS") is counted as a name, exactly."""
    single = [p for p in topic_phrases if len(p.split()) == 1 and is_short_form(p)]
    words = [p for p in [*topic_phrases, *long_forms] if p not in single]
    stems = lambda xs: [s for s in (tx.keyword_terms(x) for x in xs) if s]  # noqa: E731
    named = [singular(a) for a in [*single, *acronyms]]
    return Names(stems(words), stems(also), list(dict.fromkeys(named)))
