"""The conversation a question is asked in: does it follow up the last answer, and about which of
that answer's papers?

A pronoun alone does not say so: "Which paper shows that LLMs can forget books, and how do they
measure it?" holds its own "they", and "And the datasets?" follows up without any. One learned
decision (`FollowUp`, a logistic regression trained on written conversations about trainable
papers, `python -m eval.question.train_follow`) reads the wording (pronouns, and whether a name or
a paper asked for comes before them), what the question shares with the last answer's papers and
question, its cosine to them and to the indexed passage nearest it, and the question reader's
p(list); one threshold decides. A follow-up then points at one of the last answer's papers (the
only one cited; after a list, the one it counts to, names or describes) or at all of a list
("Which of them ...?").
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rag import text as tx
from rag.logistic import Logistic
from rag.types import Paper, Step, Turn

WEIGHTS = Path(__file__).resolve().parents[1] / "judge" / "weights" / "follow" / "follow.json"

# English anaphora: words that point at something said before (or inside the question itself).
_PRONOUN = re.compile(r"\b(they|their|theirs|them|it|its|this|these|those|he|she|his|her)\b", re.I)
_PAPER_WORD = re.compile(
    r"\b(?:the|this|that|these|those) (?:paper|papers|authors|work|method|approach|model|study|framework)\b",
    re.I,
)
_LEAD = re.compile(r"^\W*(?:and|also|so|ok(?:ay)?|then|what about|how about|and what|any|anything)\b", re.I)
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
_ORDINAL = re.compile(rf"\b({'|'.join(_ORDINALS)}|last|latter|former|\d(?:st|nd|rd|th))\b", re.I)
_GROUP = re.compile(
    r"\b(?:(?:which|any|all|each|both|none|some|many|how many|most) of (?:them|these|those|the \w+)|"
    r"these papers|those papers|all of them|each of them|them all|among them)\b",
    re.I,
)
# "the one about X", "the Razor one", "that graph one": a paper of a list, by what it is about.
_THE_ONE = re.compile(
    r"\b(?:the (?:one|paper|work)s? (?:about|on|with|that|which|using|from|for|where|in)|"
    r"(?:the|that|this) (?:[\w-]+ ){1,4}(?:one|paper)\b(?! (?:of|that|which)\b))",
    re.I,
)

FEATURES = (
    "pronoun", "paper_word", "pronoun_at", "named_before", "said_before", "names", "names_in_last", "names_new",
    "asks_paper", "listing", "words", "overlap_last", "overlap_question", "lead", "ordinal", "group",
    "the_one", "last_listed", "cos_last", "cos_question", "cos_index", "cos_gap",
)  # fmt: skip
# Each feature as the user reads it, when it decided.
SAYS = {
    "pronoun": "a pronoun",
    "paper_word": "“the paper” or “the method”",
    "pronoun_at": "where its pronoun stands",
    "named_before": "a name before its pronoun",
    "said_before": "its own words before its pronoun",
    "last_listed": "the last answer was a list",
    "names": "names of its own",
    "names_in_last": "names the last answer's paper holds",
    "names_new": "names the last answer's paper does not hold",
    "asks_paper": "it asks for a paper",
    "listing": "it asks for a list",
    "words": "many words of its own",
    "overlap_last": "words of the last answer's paper",
    "overlap_question": "words of the last question",
    "lead": "an opening like “and …”",
    "ordinal": "“the second one”",
    "group": "“which of them”",
    "the_one": "“the one about …”",
    "cos_last": "its closeness to the last answer's paper",
    "cos_question": "its closeness to the last question",
    "cos_index": "a paper of the index close to it",
    "cos_gap": "the last answer's paper closer to it than any other",
}


@dataclass(frozen=True)
class Last:
    """What the last answer offers a follow-up: its question and the papers it was about (the one
    it cited, or the papers it listed, in the order shown)."""

    question: str
    papers: tuple[Paper, ...]
    listed: bool = False

    @classmethod
    def of(cls, history: Sequence[Turn]) -> Last | None:
        if not history:
            return None
        turn = history[-1]
        answer = turn.answer
        if answer.papers:  # a list: its papers, as shown
            return cls(turn.question, tuple(h.paper for h in answer.papers), listed=True)
        cited = list(dict.fromkeys(c.paper_id for c in answer.citations))
        by_id = {r.paper.id: r.paper for r in answer.retrieved}
        # A refusal cites nothing: its best source is a guess, and nothing to point back at.
        papers = tuple(by_id[p] for p in cited if p in by_id)
        return cls(turn.question, papers, listed=len(papers) > 1)


@dataclass(frozen=True)
class Binding:
    """The decision on one question: a follow-up or not (p and why), and what it points at."""

    follows: bool
    p: float = 0.0
    papers: tuple[Paper, ...] = ()  # one paper, or every paper of a list ("which of them")
    why: str = ""

    @property
    def paper(self) -> Paper | None:
        return self.papers[0] if len(self.papers) == 1 else None


def features(
    text: str,
    last: Last,
    *,
    asks_paper: bool,
    listing: float,
    cos: Sequence[float] = (),
    closest: float = 0.0,
) -> dict[str, float]:
    """The question (`text`, without its status words) beside the last answer, as numbers.
    `cos`: its cosine to each of the last answer's papers, then to the last question; `closest`:
    to the indexed passage nearest it (a question that describes its own paper finds it)."""
    words = tx.content_words(text)
    names = set(tx.names(text))
    pronoun = _PRONOUN.search(text) or _PAPER_WORD.search(text)
    before = text[: pronoun.start()] if pronoun else ""
    papers_text = " ".join(p.text for p in last.papers)
    # A name may be part of a longer one in the paper ("the Razor one" for RazorAttention).
    lower = papers_text.lower()
    in_last = {n for n in names if tx.name_in(n, papers_text) or (len(n) >= 4 and n.lower() in lower)}
    last_words = tx.content_words(papers_text)
    return {
        "pronoun": float(bool(_PRONOUN.search(text))),
        "paper_word": float(bool(_PAPER_WORD.search(text))),
        "pronoun_at": (pronoun.start() / max(len(text), 1)) if pronoun else 1.0,
        "named_before": min(len(tx.names(before)), 3) / 3 if pronoun else 0.0,
        # what "they" can point at inside the question: "Which paper shows X, and how do they ...?"
        "said_before": min(len(tx.content_words(before)), 6) / 6 if pronoun else 0.0,
        "names": min(len(names), 3) / 3,
        "names_in_last": len(in_last) / len(names) if names else 0.0,
        "names_new": min(len(names - in_last), 3) / 3,
        "asks_paper": float(asks_paper),
        "listing": listing,
        "words": min(len(words), 12) / 12,
        "overlap_last": len(words & last_words) / len(words) if words else 0.0,
        "overlap_question": len(words & tx.content_words(last.question)) / len(words) if words else 0.0,
        "lead": float(bool(_LEAD.search(text))),
        "ordinal": float(bool(_ORDINAL.search(text))),
        "group": float(bool(_GROUP.search(text))),
        "the_one": float(bool(_THE_ONE.search(text))),
        "last_listed": float(last.listed),
        "cos_last": max(cos[:-1]) if len(cos) > 1 else 0.0,
        "cos_question": cos[-1] if cos else 0.0,
        "cos_index": closest,
        "cos_gap": (max(cos[:-1]) if len(cos) > 1 else 0.0) - closest,
    }


class Meaning:
    """What the decision reads of meaning: the index's embedder (unit vectors, so cosine = dot),
    and the nearest indexed passage (`store`: the index; without it, no passage is near)."""

    def __init__(self, embedder, store=None):
        self.embedder, self.store = embedder, store

    def closest(self, vector) -> float:
        return self.store.closest(vector) if self.store is not None else 0.0


class FollowUp:
    """p(the question follows up the last answer), one threshold, and the referent."""

    def __init__(self, model: Logistic, threshold: float = 0.5, meaning: Meaning | None = None):
        self.model, self.threshold, self.meaning = model, threshold, meaning

    @classmethod
    def shipped(cls, threshold: float | None = None, meaning: Meaning | None = None) -> FollowUp:
        data = _weights(str(WEIGHTS))
        model = Logistic.from_json(data["model"])
        return cls(model, data["threshold"] if threshold is None else threshold, meaning)

    def features(
        self, text: str, last: Last, *, asks_paper: bool, listing: float
    ) -> tuple[dict, list[float]]:
        """The decision's features, and how close each of the last answer's papers is to what the
        question says of the paper it means (`described`: the question itself, or after a list its
        "the one about X"). One batch of embeddings for both."""
        if self.meaning is None:
            return features(text, last, asks_paper=asks_paper, listing=listing), []
        said = described(text)
        papers = [p.text for p in last.papers]
        vectors = self.meaning.embedder.embed_batch([text, said, *papers, last.question])
        question, description, others = vectors[0], vectors[1], vectors[2:]
        cos = [_dot(question, v) for v in others]
        x = features(text, last, asks_paper=asks_paper, listing=listing, cos=cos,
                     closest=self.meaning.closest(question))  # fmt: skip
        return x, [_dot(description, v) for v in others[: len(papers)]]

    def bind(self, text: str, last: Last | None, *, asks_paper: bool, listing: float) -> Binding:
        if last is None:
            return Binding(False, 0.0, why="the first question")
        x, cos = self.features(text, last, asks_paper=asks_paper, listing=listing)
        p = self.model.p(x)
        follows = p >= self.threshold
        why = _why(self.model, x, follows)
        return Binding(follows, p, referent(text, last, x, cos) if follows else (), why)


def _dot(a, b) -> float:
    return float(sum(x * y for x, y in zip(a, b)))


def described(text: str) -> str:
    """What a follow-up says of the paper it means, when it describes it ("The one about speeding
    up training: what does it reduce?" -> "The one about speeding up training"); else the text."""
    m = _THE_ONE.search(text)
    if not m:
        return text
    end = re.search(r"[,:;?]|\s[-–—]\s", text[m.end() :])
    return text[m.start() : m.end() + end.start()] if end else text


def referent(text: str, last: Last, x: dict[str, float], cos: Sequence[float] = ()) -> tuple[Paper, ...]:
    """Which of the last answer's papers a follow-up means: the only one; after a list, all of
    them when it asks about the group, the one it counts to ("the second one"), else the one
    closest in meaning (`cos`, per paper), then sharing most of its words and names."""
    papers = last.papers
    if len(papers) <= 1:
        return papers
    if x.get("group"):
        return papers
    counted = _ORDINAL.search(text)
    if counted:
        word = counted.group(1).lower()
        index = {"last": -1, "latter": -1, "former": 0}.get(word)
        if index is None:
            index = _ORDINALS.index(word) if word in _ORDINALS else int(word[0]) - 1
        if -len(papers) <= index < len(papers):
            return (papers[index],)
    words, names = tx.content_words(text), tx.names(text)
    closest = dict(zip((p.id for p in papers), cos))

    def fits(p: Paper) -> tuple[int, float, int]:
        return (sum(tx.name_in(n, p.text) for n in names), closest.get(p.id, 0.0),
                len(words & tx.content_words(p.text)))  # fmt: skip

    return (max(papers, key=fits),)


def _why(model: Logistic, x: dict[str, float], follows: bool) -> str:
    """The two features that pushed the decision most its way, in words ("no …" when it was their
    absence or smallness that pushed)."""
    pushes = model.pushes(x)
    mean = dict(zip(model.features, model.mean))
    ranked = sorted(pushes, key=lambda f: -pushes[f] if follows else pushes[f])[:2]
    said = [SAYS.get(f, f) if x.get(f, 0.0) >= mean[f] else _absent(f, SAYS.get(f, f)) for f in ranked
            if (pushes[f] > 0) == follows]  # fmt: skip
    return ", ".join(said)


# A feature that pushed by its absence or smallness, in words.
ABSENT = {"words": "few words of its own", "asks_paper": "it asks for no paper", "names": "no names of its own",
          "pronoun_at": "a pronoun early on", "overlap_last": "few words of the last answer's paper"}  # fmt: skip


def _absent(feature: str, said: str) -> str:
    return ABSENT.get(feature) or "no " + re.sub(r"^(?:an?|its) ", "", said)


@lru_cache(maxsize=2)
def _weights(path: str) -> dict:
    return json.loads(Path(path).read_text())


def standalone_query(question: str, last: Last | None, binding: Binding) -> str:
    """A follow-up made searchable on its own: it names the paper(s) it points at."""
    if last is None or not binding.follows:
        return question
    if not binding.papers:
        return f"{question} (context: {last.question})"
    return f"{question} (about: {'; '.join(p.display_title for p in binding.papers[:3])})"


def step(intent) -> Step:
    """The trace step that says how the conversation was read (`intent`: a read `Intent`)."""
    how = f"p {intent.follow_p:.2f}; " if intent.follow_p is not None else ""
    if not intent.follows:
        return Step("conversation", "a new question", "", how + (intent.follow_why or "no pointer back"))
    about = "; ".join(p.display_title for p in intent.referents)
    return Step(
        "conversation", "a follow-up", about or intent.query, how + (intent.follow_why or "a pronoun")
    )
