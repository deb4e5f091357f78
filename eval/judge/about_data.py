"""Training pairs for the membership judge ("is this paper about the topic?"), from the survey
lists of the dev gold files: every candidate a survey question gets at run time (the papers whose
text holds the topic's words, and the papers dense search adds), labelled by the list (`about`)
or not (`other`; a paper the list's author read and excluded as a passing mention is the hardest
kind). Each pair is named by topic question, paper id and the index of the abstract sentence the
judge reads (the one nearest the topic): no abstract text is written.

    RAG_DATA_DIR=<conference index> python -m eval.judge.about_data [--out F]

Only papers whose id's sha1 ends in an even digit are kept (sealed tests draw from the others),
and only the survey files named in FILES (survey-dev-b stays out, to measure on; a sealed set
joins once it has been run, i.e. is dev). `--files F.jsonl --every-paper --out P` writes the
pairs of other gold files, every candidate kept: the measuring pairs (`eval.judge.about_auc`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval.judge.corpus import trainable
from rag.search.membership import asked

GOLD = Path(__file__).parent.parent / "gold" / "conference"
FILES = ("survey-dev-a.jsonl", "survey-test.jsonl", "survey-sealed.jsonl", "survey-sealed-2.jsonl")
OUT = Path(__file__).parent / "data" / "about-pairs.jsonl"


def build(pipeline, files=FILES, every_paper: bool = False) -> list[dict]:
    from rag import text as tx
    from rag.search.membership import Membership
    from rag.search.survey import Survey, dense_search

    survey = Survey(pipeline.store)  # the candidates; no judge is needed (nor may exist yet)
    nearest = dense_search(pipeline.store, pipeline.embedder, pipeline.settings.survey.dense)
    near = Membership(None, pipeline.embedder.embed_batch, pipeline.sentence_vectors, 0.0)
    rows = []
    for name in files:
        for line in (GOLD / name).read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            intent = pipeline.parse(item["question"])
            if not intent.topic:
                continue
            within = pipeline.store.resolve(intent.filters)
            counts = survey.candidates(intent, within).counts
            dense = [p for p in nearest(intent.query, within) if p not in counts]
            ids = [
                p
                for p in [*list(counts)[: pipeline.settings.survey.candidates], *dense]
                if every_paper or trainable(p)
            ]
            papers = pipeline.store.papers(ids)
            found = [papers[i] for i in ids if i in papers]
            sentences = [s for s, _ in near.nearest(intent.topic, intent.also, found)]
            gold, excluded = set(item["papers"]), set(item.get("excluded", {}))
            for paper, sentence in zip(found, sentences):
                index = next(
                    (i for i, s in enumerate(tx.sentences(paper.abstract)) if tx.plain(s) == sentence), -1
                )
                kind = "listed" if paper.id in gold else "passing" if paper.id in excluded else (
                    "words" if paper.id in counts else "dense")  # fmt: skip
                rows.append({"item": item["id"], "question": asked(intent.topic, intent.also), "paper": paper.id,
                             "sentence": index, "label": "about" if paper.id in gold else "other", "kind": kind})  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument(
        "--files", nargs="+", default=list(FILES), help="survey gold files in eval/gold/conference"
    )
    ap.add_argument("--every-paper", action="store_true", help="keep untrainable papers too (measuring only)")
    args = ap.parse_args()
    from rag.answer.pipeline import Pipeline
    from rag.settings import Settings

    rows = build(Pipeline(Settings()), args.files, args.every_paper)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kinds = {k: sum(r["kind"] == k for r in rows) for k in ("listed", "passing", "words", "dense")}
    print(f"{len(rows)} pairs -> {args.out}: {kinds}")


if __name__ == "__main__":
    main()
