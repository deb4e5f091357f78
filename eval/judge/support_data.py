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
from pathlib import Path

from eval.judge.corpus import DATA, abstract_sentences, conference, trainable, used_papers
from rag import text as tx

CLAIMS = DATA / "support-claims.jsonl"
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
        new = rng.choice(others) if others else f"{float(old.rstrip('%')) * 2:g}" + ("%" if old.endswith("%") else "")
        rows.append(base | {"must": e, "source_swap": [e, old, new], "label": "contradicted", "kind": "source number"})
    return rows


def from_copy(paper_id: str, rng: random.Random) -> list[dict]:
    """One sentence of the abstract copied, under each label the source can give it."""
    abstract = abstract_sentences(paper_id)
    candidates = [i for i, s in enumerate(abstract) if len(s.split()) >= 8]
    if not candidates:
        return []
    i = rng.choice(candidates)
    base = {"paper": paper_id, "from": i}
    rows = [base | {"must": i, "label": "supported", "kind": "copy"},
            base | {"drop": i, "label": "unstated", "kind": "copy removed"}]  # fmt: skip
    for kind, edit in (("copy number", _other_number), ("copy name", _other_name)):
        swap = edit(abstract[i], abstract, rng)
        if swap:
            rows.append(base | {"must": i, "swap": list(swap), "label": "contradicted", "kind": kind})
    return rows


def build(copies: int = 600, seed: int = 13) -> list[dict]:
    rng = random.Random(seed)
    written = [json.loads(line) for line in CLAIMS.read_text().splitlines() if line.strip()]
    assert all(trainable(c["paper_id"]) for c in written), "a hand-written claim is about an untrainable paper"
    rows = [row for claim in written for row in from_hand(claim, rng)]
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
    must = row.get("must")
    if row.get("drop") is not None:
        source[row["drop"]] = ""
    return claim, paper["title"], source, row["label"], must


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=600, help="papers whose sentences are copied")
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
