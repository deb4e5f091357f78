"""The answer judge's training data: `python -m eval.judge.answer_data` writes
`eval/judge/data/answer-pairs.jsonl`, one (question, sentence) pair a line, the sentence named by
paper id and index, never its text.

Where a label comes from (ARES's recipe: questions written for the corpus, the other passages of the
same document as hard negatives):
- questions written by hand for sentences of trainable papers (`answer-questions.jsonl`): the
  sentences each one names answer it; every other sentence of the abstract is true of the paper
  and does not (a hard negative); near-miss questions ask a detail the abstract does not state, so
  every sentence of theirs is a negative;
- the visible gold items that are not a dev half (`TRAIN_GOLD`) whose papers are all trainable:
  sentences holding a required fact answer, the abstract's other sentences do not; an unanswerable
  item's near paper gives negatives only;
- for each question, the closest sentences of the nearest *other* trainable papers (what search puts
  beside the right paper at run time): negatives;
- for each near-miss question, a sentence written by hand that answers it, as its abstract would
  (`answer-written.jsonl`): a positive beside the abstract's own negatives, so a near-miss question
  answers as often as an answerable one, and the question's wording alone cannot tell the label
  (the question-only control on the first judge, without these, separated answerable from
  near-miss dev questions with AUC 0.84 / 0.80).

`materialize` turns a row into (question, text, label) by reading the conference file; the text
is what the judge reads at run time (`rag.judge.answer.shown`).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from eval.judge.corpus import DATA, EVAL, abstract_sentences, conference, trainable
from eval.metrics import contains
from rag import text as tx
from rag.judge.answer import shown

QUESTIONS = DATA / "answer-questions.jsonl"
# Questions written later under five briefs (terse, conversational, acronym-led, described by what
# the paper does, follow-ups), one writer each, near-misses of the kinds users ask (the names behind
# a counted category, a number only described, a detail the sentence on the topic lacks, a setting
# never mentioned), each with its written answering sentence inline (`answer_sentence`).
USERS = DATA / "answer-questions-users.jsonl"
WRITTEN = DATA / "answer-written.jsonl"  # near-miss question id -> a sentence written to answer it
PAIRS = DATA / "answer-pairs.jsonl"
# Gold files trained on: the dev halves (conference dev-a/dev-b, seeds dev) measure the judge and
# its uses, and sealed files are never read.
TRAIN_GOLD = (EVAL / "gold" / "conference" / "test.jsonl", EVAL / "gold" / "seeds" / "test.jsonl")
NEIGHBOURS, PER_NEIGHBOUR = 3, 1  # other papers per question, negatives from each
SAME_PAPER = 4  # negatives per written question from its own abstract (of ~9: enough, and 2x faster)


def from_questions(rows: list[dict]) -> Iterator[dict]:
    """Each written question against the sentences that answer it and `SAME_PAPER` others of its
    abstract (a near-miss question: its nearest sentence and `SAME_PAPER` others), drawn by a
    generator seeded with the question's id, so the file is the same on every build."""
    for r in rows:
        answers = set(r["answers"])
        others = [i for i in range(len(abstract_sentences(r["paper_id"]))) if i not in answers]
        random.Random(r["id"]).shuffle(others)
        if "nearest" in r:
            others = [r["nearest"], *[i for i in others if i != r["nearest"]]]
        for i in sorted(answers) + sorted(others[: SAME_PAPER + (not answers)]):
            kind = "answers" if i in answers else ("near miss" if not answers else "same paper")
            yield {"question": r["question"], "paper": r["paper_id"], "sentence": i,
                   "label": int(i in answers), "kind": kind, "written": r["id"]}  # fmt: skip


def from_written(rows: list[dict]) -> Iterator[dict]:
    """Each near-miss question beside the sentence written to answer it."""
    written = {r["id"]: r["answer_sentence"] for r in rows if r.get("answer_sentence")}
    if WRITTEN.exists():
        written |= {w["id"]: w["answer_sentence"] for w in map(json.loads, WRITTEN.read_text().splitlines())}
    for r in rows:
        if r["id"] in written and not r["answers"]:
            yield {"question": r["question"], "paper": r["paper_id"], "text": written[r["id"]], "label": 1,
                   "kind": "written answer", "written": r["id"]}  # fmt: skip


def from_gold() -> Iterator[dict]:
    """Visible gold items on trainable papers: fact sentences answer, the others do not."""
    papers = conference()
    for path in TRAIN_GOLD:
        for item in map(json.loads, path.read_text().splitlines()):
            answerable = item["type"] != "unanswerable"
            ids = item["papers"] if answerable else [p for p in [item.get("about")] if p]
            if not ids or not all(p in papers and trainable(p) for p in ids) or item.get("history"):
                continue
            facts = [[v] if isinstance(v, str) else v for v in item["facts"]]
            facts = [f for f in facts if not any(contains(item["question"], v) for v in f)]
            if answerable and not facts:
                continue
            for pid in ids:
                for i, s in enumerate(abstract_sentences(pid)):
                    hit = answerable and any(contains(s, v) for f in facts for v in f)
                    kind = "answers" if hit else ("near miss" if not answerable else "same paper")
                    yield {"question": item["question"], "paper": pid, "sentence": i, "label": int(hit),
                           "kind": kind, "gold": item["id"]}  # fmt: skip


def other_papers(questions: list[tuple[str, str]], embedder) -> Iterator[dict]:
    """For each (question, its paper): of each of the nearest other trainable papers (by title, as
    the embedder sees them), the sentence sharing most of the question's words, labelled "does not
    answer": what search puts beside the right paper at run time."""
    papers = conference()
    pool = sorted(p for p in papers if trainable(p))
    P = np.asarray(embedder.embed_batch([papers[p]["title"] for p in pool]), dtype=np.float32)
    Q = np.asarray(embedder.embed_batch([q for q, _ in questions]), dtype=np.float32)
    for (question, own), qv in zip(questions, Q):
        near = [pool[j] for j in np.argsort(-(P @ qv))[: NEIGHBOURS + 1] if pool[j] != own][:NEIGHBOURS]
        words = tx.content_words(question)
        for pid in near:
            shares = [tx.overlap(words, s) for s in abstract_sentences(pid)]
            for i in np.argsort(shares, kind="stable")[::-1][:PER_NEIGHBOUR]:
                yield {"question": question, "paper": pid, "sentence": int(i), "label": 0,
                       "kind": "other paper"}  # fmt: skip


def written_questions(users: bool = False) -> list[dict]:
    """The written questions; with `users`, also those written under the user briefs (not in the
    shipped judge: the judge trained with them did no better on others' writing, docs/evaluation.md)."""
    files = [f for f in (QUESTIONS, *([USERS] if users else [])) if f.exists()]
    return [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]


def build(embedder, users: bool = False) -> list[dict]:
    written = written_questions(users)
    rows = list(from_questions(written)) + list(from_written(written)) + list(from_gold())
    asked = sorted({(r["question"], r["paper"]) for r in rows if r["label"] == 1})
    rows += list(other_papers(asked, embedder))
    return rows


def materialize(row: dict) -> tuple[str, str, int]:
    """(question, the text the judge reads, label) for a data row."""
    paper = conference()[row["paper"]]
    sentence = row["text"] if "text" in row else abstract_sentences(row["paper"])[row["sentence"]]
    return row["question"], shown(paper["title"], sentence), row["label"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--users", action="store_true", help="also the questions written under the user briefs (USERS)"
    )
    parser.add_argument(
        "--out", type=Path, default=PAIRS, help="where the pairs go (default: the shipped judge's)"
    )
    args = parser.parse_args()
    from rag.index.embedding import embedder_from_settings
    from rag.settings import Settings

    rows = build(embedder_from_settings(Settings()), args.users)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    kinds: dict[str, int] = {}
    for r in rows:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    print(f"{len(rows)} pairs -> {args.out}: {kinds}")


if __name__ == "__main__":
    main()
