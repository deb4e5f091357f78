"""The sentence decision's rows: labelled sentences about trainable papers, each checked against its
source as an answer sentence is, kept as features and a label (`python -m eval.judge.sentence_data`).

Where the sentences come from (every paper trainable: its id's sha1 ends in an even hex digit):
  support    the support judge's pairs (support_data.PAIRS): hand-written claims, their edits, the
             abstract's own sentences, each beside its abstract or an edit of it (a sentence
             removed, negated, its direction turned, a span rewritten by hand)
  invented   an abstract sentence copied (supported), and the same copy with one name or number
             replaced by one its abstract never says (a name from another paper, a number of
             another size), negated, or its direction reversed: a near-copy that gets one detail
             wrong, the draft error that overlap alone cannot see (built at run time from a fixed
             seed; nothing stored)
  users      the answering sentence written for each near-miss question of the user briefs
             (answer_data.USERS): fluent, on topic, and not stated by the abstract
  drafts     sentences of the local model's drafts for the user-brief questions, labelled by hand
             against the abstract they cite (data/sentence-drafts.jsonl: question id, the sentence's
             index in the draft and its sha1; the drafts' text is not committed)

Each row is checked by `Trust.verify` against the whole abstract (as `citewise verify` does) with
the decision off; the committed file holds ids, features and the label only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from eval.judge.answer_data import USERS
from eval.judge.corpus import DATA, abstract_sentences, conference, trainable
from eval.judge.support_data import PAIRS, _direction, _negation, materialize
from rag.answer.trust import Trust
from rag.search.evidence import evidence_for
from rag.types import Paper

OUT = DATA / "sentence-rows.jsonl"
DRAFTS = DATA / "sentence-drafts.jsonl"


def _key(*parts) -> str:
    return hashlib.sha1(json.dumps(parts).encode()).hexdigest()[:12]


def support_rows() -> Iterator[dict]:
    """(id, source, paper, claim, sentences, label) from the support judge's pairs, once each."""
    seen = set()
    for line in PAIRS.read_text().splitlines():
        row = json.loads(line)
        claim, _, sentences, label, _ = materialize(row)
        key = _key(row["paper"], claim, sentences)
        if key in seen:
            continue
        seen.add(key)
        yield dict(id=f"s-{key}", source=f"support {row['kind']}", paper=row["paper"], claim=claim,
                   sentences=sentences, label=int(label == "supported"))  # fmt: skip


def invented_rows(papers: int = 700, seed: int = 29) -> Iterator[dict]:
    """Copies of abstract sentences, and each with one name or number its abstract never says."""
    import random

    from rag import text as tx

    rng = random.Random(seed)
    pool = sorted(p for p in conference() if trainable(p))
    rng.shuffle(pool)
    names = sorted({n for p in pool[papers : papers * 3] for s in abstract_sentences(p) for n in tx.names(s)
                    if len(n) > 2})  # fmt: skip
    for paper in pool[:papers]:
        abstract = abstract_sentences(paper)
        said = " ".join(abstract)
        long = [i for i, s in enumerate(abstract) if len(s.split()) >= 8]
        if not long:
            continue
        counted = [i for i in long if tx.numbers(abstract[i], words=False)]
        i = rng.choice(counted if counted and rng.random() < 0.5 else long)
        text = abstract[i]
        base = dict(source="invented", paper=paper, sentences=None)
        yield base | dict(id=f"i-{paper}-{i}", claim=text, label=1)
        here = sorted(n for n in tx.names(text) if len(n) > 2)
        if here:
            new = rng.choice(names)
            if not tx.name_in(new, said):
                yield base | dict(
                    id=f"i-{paper}-{i}-name", claim=text.replace(rng.choice(here), new, 1), label=0
                )
        # Negated ("is" -> "is not", "We show" -> "We do not show") or its direction reversed.
        negated = _negation(text) or ((text[:3], "We do not ") if text.startswith("We ") else None)
        for kind, edit in (("negation", negated), ("direction", _direction(text))):
            if edit and rng.random() < 0.5:
                yield base | dict(id=f"i-{paper}-{i}-{kind}", claim=text.replace(*edit, 1), label=0)
        numbers = sorted(tx.numbers(text, words=False))
        if numbers:
            old = rng.choice(numbers)
            new = f"{float(old) * rng.choice([0.5, 1.5, 2, 3]) + rng.choice([0, 1]):g}"
            if new not in tx.numbers(said) and old in text:
                yield base | dict(id=f"i-{paper}-{i}-number", claim=text.replace(old, new, 1), label=0)


def users_rows(path: Path = USERS) -> Iterator[dict]:
    """Each near-miss's written answering sentence against its (unchanged) abstract: unstated."""
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if not r["answers"] and r.get("answer_sentence"):
            yield dict(id=f"u-{r['id']}", source=f"users {r['writer']}", paper=r["paper_id"],
                       claim=r["answer_sentence"], sentences=None, label=0)  # fmt: skip


def drafts_rows(texts: Path | None) -> Iterator[dict]:
    """Hand-labelled draft sentences, their text read from the drafts' file (`--texts`)."""
    if not DRAFTS.exists() or texts is None or not texts.exists():
        return
    from rag import text as tx
    from rag.answer.citations import strip_markers

    drafts = {r["id"]: r for r in map(json.loads, texts.read_text().splitlines())}
    for line in DRAFTS.read_text().splitlines():
        lab = json.loads(line)
        d = drafts.get(lab["question"])
        said = tx.sentences(d["draft_text"]) if d else []
        if lab["index"] >= len(said):
            continue
        text = strip_markers(said[lab["index"]])
        if hashlib.sha1(text.encode()).hexdigest()[:12] != lab["sha1"]:
            continue  # another draft than the one labelled
        yield dict(id=f"d-{lab['question']}-{lab['index']}", source=f"drafts {lab['writer']}",
                   paper=lab["paper_id"], claim=text, sentences=None, label=int(lab["supported"]))  # fmt: skip


def featurize(row: dict, trust: Trust, embedder) -> dict:
    paper = conference()[row["paper"]]
    sentences = row["sentences"] or abstract_sentences(row["paper"])
    abstract = " ".join(s for s in sentences if s)
    ev = evidence_for(Paper(row["paper"], abstract, paper["title"]), embedder)
    vector = np.asarray(embedder.embed(row["claim"]), dtype=np.float32)
    verdict = trust.verify(row["claim"], vector, ev, whole=True, decide=False)
    return {k: row[k] for k in ("id", "source", "paper", "label")} | {
        "rule": int(all(c.passed for c in verdict.checks)),
        "features": {k: round(v, 4) for k, v in verdict.features.items()},
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--texts", type=Path, default=Path("reports/users-dev/texts.jsonl"),
                    help="the drafts' text (eval.selector.collect --texts), for the labelled draft sentences")  # fmt: skip
    ap.add_argument(
        "--sources",
        nargs="+",
        choices=("support", "invented", "users", "drafts"),
        default=["support", "invented", "users", "drafts"],
        help="which rows to build (default: all)",
    )
    ap.add_argument("--append", action="store_true", help="add to --out instead of writing it anew")
    args = ap.parse_args(argv)
    from rag.index.embedding import embedder_from_settings
    from rag.settings import Settings

    settings = Settings()
    embedder, trust = embedder_from_settings(settings), Trust(settings.trust)
    made = {"support": support_rows, "invented": invented_rows, "users": users_rows,
            "drafts": lambda: drafts_rows(args.texts)}  # fmt: skip
    rows = [row for name in args.sources for row in made[name]()]
    assert all(trainable(r["paper"]) for r in rows), "a row is about an untrainable paper"
    with args.out.open("a" if args.append else "w") as f:
        for n, row in enumerate(rows, 1):
            f.write(json.dumps(featurize(row, trust, embedder)) + "\n")
            if n % 500 == 0:
                print(f"{n}/{len(rows)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
