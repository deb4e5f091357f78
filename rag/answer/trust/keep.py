"""One learned decision per answer sentence: keep it under a source, or not.

Every claim check (numbers, names, coverage, ...) and every measure of how well the source covers
the sentence is a feature here, never a veto: a logistic regression (`rag.logistic.Logistic`)
trained on labelled sentences about trainable papers (`python -m eval.judge.train_sentence`) turns
them into p(the source supports the sentence), and one threshold, chosen on dev for a stated risk
of keeping an unsupported sentence, decides. A sentence the decision does not keep says why in
words: the features that pushed it down most (`Decision.why`).

The claim-side features alone (`CLAIM_SIDE`: how long the sentence is, how much of it the question
gave) are the decision's control: a decision that did as well from them would be reading the
sentence's wording, not the evidence.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rag import text as tx
from rag.answer.trust.base import Claim, Source
from rag.logistic import Logistic
from rag.types import Check

WEIGHTS = Path(__file__).resolve().parents[2] / "judge" / "weights" / "sentence" / "sentence.json"

# Each feature as the user reads it when it pushed a sentence out.
SAYS = {
    "fail_numbers": "a number not in the source",
    "fail_quantities": "a number given for another quantity",
    "fail_names": "a name not in the source",
    "fail_polarity": "a negation the source does not make",
    "fail_direction": "a direction the source reverses",
    "fail_coverage": "most of its words not in the source",
    "fail_similarity": "about something else than the source",
    "fail_topic": "the question's subject not in the source",
    "share": "few of its words in the source",
    "best_share": "few of its words in the source's closest sentence",
    "support": "far from the source's closest sentence",
    "cosine": "far in meaning from the source's closest sentence",
    "missing_names": "names the source lacks",
    "missing_numbers": "numbers the source lacks",
}
# What the sentence alone says, without its source: the control.
CLAIM_SIDE = ("words", "given", "claim_names", "claim_numbers")


def features(claim: Claim, source: Source, checks: list[Check], cosine: float) -> dict[str, float]:
    """One sentence against one source, as numbers: each check failed (0/1), how much of the
    sentence the source and its closest sentence hold, and what the sentence alone is like."""
    words = set(claim.words) - tx.meta_stems()
    given = claim.given | tx.content_words(claim.users)
    # The question's words are neither for nor against the sentence: what it adds must be in the
    # source ("The 2014 Tour de France was won by X" adds only X).
    # A sentence that only restates the question (and names a paper) claims that restatement: then
    # its words must stand on the source themselves.
    own = (words - given) or words
    share = len(own & tx.content_words(source.passage)) / len(own) if own else 1.0
    # The source sentence holding most of what the sentence adds (the answer often sits in another
    # sentence than the one that restates the question).
    said = [tx.content_words(s) for s in [source.best, *tx.sentences(source.passage)]]
    best_share = max(len(own & words) for words in said) / len(own) if own else 1.0
    names = tx.names(claim.text)
    missing_names = [n for n in names if not tx.name_in(n, source.passage) and not tx.name_in(n, claim.users)]
    # As the numbers check counts them: digits, and counted things in words ("five enhancements").
    users = tx.numbers(claim.users) | {n for n, _, _ in tx.quantities(claim.users)}
    numbers = (tx.numbers(claim.text, words=False) | {n for n, _, _ in tx.quantities(claim.text)}) - users
    missing_numbers = numbers - tx.numbers(source.passage)
    out = {f"fail_{c.name}": float(not c.passed) for c in checks}
    # A failing check on a sentence that otherwise copies its closest source sentence (one number
    # or name changed) says more than on a loose paraphrase: each check also weighed by the overlap.
    out |= {f"near_{c.name}": float(not c.passed) * best_share for c in checks}
    out["failed"] = float(sum(not c.passed for c in checks))
    out |= {
        "share": share,
        "best_share": best_share,
        "support": float(source.score),
        "cosine": float(cosine),
        "missing_names": math.log1p(len(missing_names)),
        "missing_numbers": math.log1p(len(missing_numbers)),
        "words": math.log1p(len(words)),
        "given": len(words & given) / len(words) if words else 0.0,
        "claim_names": math.log1p(len(names)),
        "claim_numbers": math.log1p(len(numbers)),
    }
    return out


@dataclass(frozen=True)
class Decision:
    """Kept or not, p(the source supports the sentence), and why in words when not kept."""

    keep: bool
    p: float
    why: str = ""


@dataclass(frozen=True)
class SentenceDecision:
    """The shipped logistic regression and its threshold."""

    model: Logistic
    threshold: float
    trained_on: str = ""

    @classmethod
    def load(cls, path: Path = WEIGHTS, threshold: float | None = None) -> SentenceDecision:
        d = json.loads(path.read_text())
        t = d["threshold"] if threshold is None else threshold
        return cls(Logistic.from_json(d["model"]), t, d.get("trained_on", ""))

    def decide(self, x: dict[str, float]) -> Decision:
        p = self.model.p(x)
        if p >= self.threshold:
            return Decision(True, p)
        return Decision(False, p, self.why(x, p))

    def why(self, x: dict[str, float], p: float) -> str:
        """The (at most three) reasons that pushed p down most, in words: a failed check (its two
        features together), or a measure below what a kept sentence usually has."""
        pushes: dict[str, float] = {}
        weight = dict(zip(self.model.features, self.model.weight))
        for f, v in self.model.pushes(x).items():
            check = f.removeprefix("near_").removeprefix("fail_")
            if f.startswith(("fail_", "near_")):
                if x.get(f"fail_{check}", 0.0):  # only a check that failed is a reason
                    pushes[f"fail_{check}"] = pushes.get(f"fail_{check}", 0.0) + v
            elif (
                f != "failed" and f not in CLAIM_SIDE and weight[f] > 0
            ):  # a measure where more is better, found low
                pushes[f] = v
        down = sorted((v, f) for f, v in pushes.items() if v < 0)[:3]
        said = list(dict.fromkeys(SAYS.get(f, f) for _, f in down))
        return f"not kept (p {p:.2f} < {self.threshold:.2f}): {', '.join(said) or 'weak support overall'}"


@lru_cache(maxsize=4)
def shipped(threshold: float | None = None) -> SentenceDecision:
    return SentenceDecision.load(WEIGHTS, threshold)
