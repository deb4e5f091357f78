"""The support judge's training data: `python -m eval.judge.support_data` writes
`eval/judge/data/support-pairs.jsonl`, one pair a line, each naming its claim and its source by
paper id and sentence index.

The label is known by construction, and the same fluent claim appears under more than one label
(MiniCheck's recipe: edit the source, not only the claim), so the judge must read the source:
- hand-written claims (`support-claims.jsonl`, written from abstracts of trainable papers:
  paraphrases, restated numbers, truthful negations; contradictions of nine kinds; unstated
  details), each with its sentence in the source, and again with that sentence removed (unstated);
- a true claim whose number is changed in the source sentence (contradicted, the claim unchanged);
- abstract sentences copied (supported), the same copy with its sentence removed (unstated), and the
  copy with a number or a name replaced by another of the same abstract (contradicted): the copy is
  supported as often as it is not, so "verbatim" does not mean "supported".

`materialize` turns a row into (claim, passage, label) by reading the conference file; the passage
is what the judge reads at run time (`rag.judge.support.passage`).
"""

from __future__ import annotations

import argparse
import json
import random
import re

from eval.judge.corpus import DATA, abstract_sentences, conference, trainable, used_papers
from rag import text as tx

CLAIMS = DATA / "support-claims.jsonl"
# For hand-written claims: the evidence sentence edited by hand so it flips the label, as character
# spans of that sentence and what a helper wrote in their place (no abstract text is stored).
FLIPS = DATA / "support-flips.jsonl"
PAIRS = DATA / "support-pairs.jsonl"
_NUMBER = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?%?(?![\w-])")


def _numbers(sentence: str) -> list[str]:
    return _NUMBER.findall(sentence)


def _other_number(sentence: str, abstract: list[str], rng: random.Random) -> tuple[str, str] | None:
    """A number of `sentence` and another number of the same abstract to put in its place."""
    here = _numbers(sentence)
    if not here:
        return None
    old = rng.choice(here)
    pool = sorted({n for s in abstract for n in _numbers(s)} - set(here))
    if not pool:  # no other number in the abstract: a near value of the same form
        value = float(old.rstrip("%"))
        new = f"{value * rng.choice([0.5, 1.5, 2, 3]):g}" + ("%" if old.endswith("%") else "")
        return (old, new) if new != old else None
    return old, rng.choice(pool)


def _other_name(sentence: str, abstract: list[str], rng: random.Random) -> tuple[str, str] | None:
    """A name of `sentence` and another name the same abstract uses."""
    here = sorted(n for n in tx.names(sentence) if len(n) > 2)
    pool = sorted({n for s in abstract for n in tx.names(s) if len(n) > 2} - set(here))
    if not here or not pool:
        return None
    return rng.choice(here), rng.choice(pool)


def from_hand(claim: dict, rng: random.Random) -> list[dict]:
    """A hand-written claim with its sentence (a true one twice: fluent true claims are what the
    copies outnumber); a true one, and a third of the false ones, again with that sentence removed
    (unstated); a true one with its number changed in the source (contradicted)."""
    base = {"paper": claim["paper_id"], "claim": claim["claim"], "written": claim["id"]}
    e, label = int(claim["evidence_sentence"]), claim["label"]
    row = base | {"must": e if label != "unstated" else None, "label": label, "kind": f"hand {claim['kind']}"}
    rows = [row, row] if label == "supported" else [row]
    if label == "supported" or (label == "contradicted" and rng.random() < 1 / 3):
        rows.append(base | {"drop": e, "label": "unstated", "kind": "source removed"})
    abstract = abstract_sentences(claim["paper_id"])
    shared = [n for n in _numbers(abstract[e]) if n in _numbers(claim["claim"])] if e < len(abstract) else []
    if label == "supported" and shared:
        old = rng.choice(shared)
        others = sorted({n for s in abstract for n in _numbers(s)} - {old})
        new = (
            rng.choice(others)
            if others
            else f"{float(old.rstrip('%')) * 2:g}" + ("%" if old.endswith("%") else "")
        )
        rows.append(
            base | {"must": e, "source_swap": [e, old, new], "label": "contradicted", "kind": "source number"}
        )
    return rows


# Words that point one way, each with one that points the other (the direction edits).
_OPPOSITE = dict(
    pair
    for a, b in [("improves", "degrades"), ("improve", "degrade"), ("increases", "decreases"),
                 ("increase", "decrease"), ("higher", "lower"), ("more", "fewer"), ("better", "worse"),
                 ("faster", "slower"), ("outperforms", "underperforms"), ("outperform", "underperform"),
                 ("reduces", "increases"), ("reduce", "increase"), ("larger", "smaller"), ("superior", "inferior"),
                 ("boosts", "hurts"), ("enhances", "weakens"), ("surpasses", "trails"), ("gains", "losses"),
                 ("strong", "weak"), ("stronger", "weaker"), ("efficient", "inefficient"), ("robust", "brittle")]
    for pair in ((a, b), (b, a))
)  # fmt: skip
_AUXILIARY = re.compile(r" (is|are|was|were|can|could|does|do|did|will|would|should|may|might) (?!not )")


def _negation(sentence: str) -> tuple[str, str] | None:
    """Negate a sentence: drop its "not", or put one after its first auxiliary verb."""
    if " not " in sentence:
        return " not ", " "
    m = _AUXILIARY.search(sentence)
    return (m.group(0), f" {m.group(1)} not ") if m else None


def _direction(sentence: str) -> tuple[str, str] | None:
    """Reverse the first word of the sentence that points one way."""
    for word in re.findall(r"[a-z]+", sentence):
        if word in _OPPOSITE and f" {word} " in sentence:
            return f" {word} ", f" {_OPPOSITE[word]} "
    return None


def _edits(sentence: str, abstract: list[str], rng: random.Random) -> list[tuple[str, tuple[str, str]]]:
    """The edits that make a sentence false: (kind, (old, new)) for each that applies."""
    found = [("negation", _negation(sentence)), ("direction", _direction(sentence)),
             ("number", _other_number(sentence, abstract, rng)), ("name", _other_name(sentence, abstract, rng))]  # fmt: skip
    return [(kind, edit) for kind, edit in found if edit]


def from_copy(paper_id: str, rng: random.Random) -> list[dict]:
    """One sentence of the abstract copied, under each label the source can give it: supported; its
    sentence removed (unstated); the copy edited (contradicted); the source edited and the copy
    unchanged (contradicted: the same claim under both labels, so the judge must read the source)."""
    abstract = abstract_sentences(paper_id)
    candidates = [i for i, s in enumerate(abstract) if len(s.split()) >= 8]
    if not candidates:
        return []
    # Mostly a sentence with a number or a word that points one way: the edits judges miss most.
    pointed = [i for i in candidates if _numbers(abstract[i]) or _direction(abstract[i])]
    i = rng.choice(pointed if pointed and rng.random() < 0.7 else candidates)
    base = {"paper": paper_id, "from": i}
    rows = [base | {"must": i, "label": "supported", "kind": "copy"},
            base | {"drop": i, "label": "unstated", "kind": "copy removed"}]  # fmt: skip
    for kind, edit in _edits(abstract[i], abstract, rng):
        side = rng.choice(["claim", "source"])
        change = {"swap": list(edit)} if side == "claim" else {"source_swap": [i, *edit]}
        rows.append(base | {"must": i, "label": "contradicted", "kind": f"{side} {kind}"} | change)
    return rows


def source_edits(claim: dict, rng: random.Random) -> list[dict]:
    """A true hand-written claim beside its sentence reversed or negated in the source, when the
    claim says the word that was changed (contradicted: a fluent claim, a source that says otherwise)."""
    e = int(claim["evidence_sentence"])
    abstract = abstract_sentences(claim["paper_id"])
    words = set(re.findall(r"[a-z]+", claim["claim"].lower()))
    rows = []
    for kind, edit in (("direction", _direction(abstract[e])), ("negation", _negation(abstract[e]))):
        if edit and (
            set(edit[0].split()) & words if kind == "direction" else " not " in edit[0] and "not" in words
        ):
            rows.append({"paper": claim["paper_id"], "claim": claim["claim"], "written": claim["id"], "must": e,
                         "source_swap": [e, *edit], "label": "contradicted", "kind": f"source {kind}"})  # fmt: skip
    return rows


def flipped(written: dict[str, dict]) -> list[dict]:
    """Each hand-written claim beside its evidence sentence edited by hand to flip its label: the
    same fluent claim under both labels, so its wording alone cannot tell (the claim-only control
    ranked true above false claims with AUC 0.665 without them)."""
    if not FLIPS.exists():
        return []
    rows = []
    for line in FLIPS.read_text().splitlines():
        flip = json.loads(line) if line.strip() else None
        claim = written.get(flip["id"]) if flip else None
        if not claim:
            continue
        e = int(claim["evidence_sentence"])
        rows.append({"paper": claim["paper_id"], "claim": claim["claim"], "written": claim["id"], "must": e,
                     "source_spans": [e, flip["spans"]], "label": flip["label_after"],
                     "kind": f"flipped {claim['kind']}"})  # fmt: skip
    return rows


def build(copies: int = 1000, seed: int = 13) -> list[dict]:
    rng = random.Random(seed)
    written = [json.loads(line) for line in CLAIMS.read_text().splitlines() if line.strip()]
    assert all(trainable(c["paper_id"]) for c in written), (
        "a hand-written claim is about an untrainable paper"
    )
    rows = [row for claim in written for row in from_hand(claim, rng)]
    rows += [row for claim in written if claim["label"] == "supported" for row in source_edits(claim, rng)]
    rows += flipped({c["id"]: c for c in written})
    taken = used_papers(skip=(PAIRS,)) | {c["paper_id"] for c in written}
    pool = sorted(p for p in conference() if trainable(p) and p not in taken)
    rng.shuffle(pool)
    for paper_id in pool[:copies]:
        rows += from_copy(paper_id, rng)
    return rows


def materialize(row: dict) -> tuple[str, str, list[str], str, int | None]:
    """(claim, title, the source's sentences as this row has them ("" for a removed one), label,
    the sentence the passage must show)."""
    paper = conference()[row["paper"]]
    abstract = abstract_sentences(row["paper"])
    claim = row.get("claim") or abstract[row["from"]]
    if row.get("swap"):
        old, new = row["swap"]
        claim = claim.replace(old, new, 1)
    source = list(abstract)
    if row.get("source_swap"):
        i, old, new = row["source_swap"]
        source[i] = source[i].replace(old, new, 1)
    if row.get("source_spans"):
        i, spans = row["source_spans"]
        for start, end, new in sorted(spans, reverse=True):  # from the end: earlier offsets stay valid
            source[i] = source[i][:start] + new + source[i][end:]
    must = row.get("must")
    if row.get("drop") is not None:
        source[row["drop"]] = ""
    return claim, paper["title"], source, row["label"], must


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1000, help="papers whose sentences are copied")
    args = parser.parse_args()
    rows = build(args.copies)
    PAIRS.parent.mkdir(parents=True, exist_ok=True)
    PAIRS.write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["label"]] = counts.get(r["label"], 0) + 1
    print(f"{len(rows)} pairs -> {PAIRS}: {counts}")


if __name__ == "__main__":
    main()
