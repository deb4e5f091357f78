"""`python -m eval.map_names`: cluster names written by the local model beside the map's own.

The issue that asked for the map allowed either way of naming a cluster: its most distinctive
terms (c-TF-IDF, what `citewise map` does) or a name the local model writes from a few typical
titles, whichever reads better. This prints both for every topic and for N random themes, with
the seconds each model name took, to judge by hand; it writes one JSON line per cluster to `--out`
as it goes. Typical titles are those of the papers nearest the cluster's mean vector. Run on the
whole conference index, alone on the machine."""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

from rag.index.embedding import embedder_from_settings
from rag.index.store import store_from_settings
from rag.llm import llm_from_settings
from rag.map.build import ensure_map, map_folder, paper_vectors
from rag.settings import Settings

ASK = (
    "Titles of papers from one cluster of a machine learning conference:\n{titles}\n\n"
    "What research topic do these papers share? Answer with a short heading of 2 to 5 words, "
    "nothing else."
)


def typical_titles(rows: np.ndarray, vectors: np.ndarray, titles: list[str], n: int) -> list[str]:
    """The titles of the `n` papers nearest the mean of `rows`."""
    centre = vectors[rows].mean(axis=0)
    nearest = np.argsort(-(vectors[rows] @ centre))[:n]
    return [titles[rows[i]] for i in nearest]


def model_name(llm, titles: list[str]) -> str:
    listed = "\n".join(f"- {t}" for t in titles)
    messages = [
        {"role": "system", "content": "You name research areas for a map of a conference."},
        {"role": "user", "content": ASK.format(titles=listed)},
    ]
    reply = llm.complete(messages, max_tokens=16, temperature=0.0)
    return reply.strip().split("\n")[0].strip(" \"'*.")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m eval.map_names")
    parser.add_argument("--themes", type=int, default=20, help="random themes besides every topic")
    parser.add_argument("--titles", type=int, default=12, help="typical titles shown to the model")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("eval/reports/map-names.jsonl"))
    args = parser.parse_args()
    settings = Settings()
    store = store_from_settings(settings, embedder_from_settings(settings))
    conference_map = ensure_map(map_folder(settings, store), store)
    papers, vectors = paper_vectors(store)
    row = {p.id: i for i, p in enumerate(papers)}
    titles = [p.title for p in papers]
    llm = llm_from_settings(settings, "llamacpp")
    members: dict[tuple[str, int], list[int]] = {}
    for p in conference_map.papers:
        members.setdefault(("topic", p.topic), []).append(row[p.id])
        members.setdefault(("theme", p.theme), []).append(row[p.id])
    themes = random.Random(args.seed).sample(range(len(conference_map.themes)), args.themes)
    clusters = [("topic", t.id, t.name) for t in conference_map.topics]
    clusters += [("theme", t, conference_map.theme_name(t)) for t in themes]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for kind, cid, terms in clusters:
            rows = np.array(members[(kind, cid)])
            started = time.perf_counter()
            named = model_name(llm, typical_titles(rows, vectors, titles, args.titles))
            seconds = time.perf_counter() - started
            record = {"kind": kind, "id": cid, "size": len(rows), "terms": terms, "model": named,
                      "seconds": round(seconds, 1)}  # fmt: skip
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
            print(f"{kind} {cid:3d} ({len(rows):4d})  {terms}\n{'':16s}model: {named}  [{seconds:.1f} s]")


if __name__ == "__main__":
    main()
