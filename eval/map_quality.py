"""`python -m eval.map_quality`: how well the conference map's clusters agree with what is known.

0. Topics as regions: the share of each topic's papers inside its own region of the picture
   (rag.map.regions.region_share: min, median, topics under 0.8), the share of a paper's 15
   nearest papers on the picture in its topic, and topics whose names share a word.
1. Agreement with the conference's own labels: adjusted mutual information (AMI) between the
   map's topics (and themes) and the 21 primary areas, beside k-means on the same paper vectors
   with k = 21 and with k = the number of topics.
2. Survey lists: for dev survey items (their gold lists of papers), the share of a list's papers
   that fall in its 3 most common themes (and topics, and primary areas), beside random lists of
   the same sizes.
3. `--names N`: N random themes with their name and five titles, to judge by hand.
Run on the whole conference index, alone on the machine; `--map FILE` measures a kept map.json
(an older one, say) instead of the current map."""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections import Counter
from pathlib import Path

import numpy as np

from eval.gold import CONFERENCE_GOLD
from rag.index.embedding import embedder_from_settings
from rag.index.store import store_from_settings
from rag.map.build import ensure_map, map_folder, paper_vectors
from rag.map.model import ConferenceMap
from rag.map.regions import region_share
from rag.map.topics import name_keys
from rag.settings import Settings

SURVEY_FILES = ("survey-dev-a.jsonl", "survey-dev-b.jsonl")


def survey_lists(first: int | None) -> list[list[str]]:
    """The gold paper lists of the dev survey items, by item id (the first `first` of them)."""
    items = [
        json.loads(line)
        for name in SURVEY_FILES
        for line in (CONFERENCE_GOLD / name).read_text().splitlines()
    ]
    items.sort(key=lambda item: item["id"])
    return [item["papers"] for item in items[:first]]


def top3_share(lists: list[list[str]], label: dict[str, object]) -> float:
    """Mean over lists of the share of its papers in its 3 most common labels."""
    shares = []
    for papers in lists:
        found = [label[p] for p in papers if p in label]
        if found:
            shares.append(sum(n for _, n in Counter(found).most_common(3)) / len(found))
    return statistics.mean(shares) if shares else float("nan")


def agreement(conference_map: ConferenceMap, vectors: np.ndarray, ids: list[str]) -> dict[str, float]:
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_mutual_info_score as ami

    by_id = {p.id: p for p in conference_map.papers}
    rows = [i for i, pid in enumerate(ids) if by_id[pid].area]
    area = [by_id[ids[i]].area for i in rows]
    out = {
        "map topics": ami(area, [by_id[ids[i]].topic for i in rows]),
        "map themes": ami(area, [by_id[ids[i]].theme for i in rows]),
    }
    for k in (21, len(conference_map.topics)):
        labels = KMeans(k, n_init=3, random_state=0).fit(vectors).labels_
        out[f"k-means, k={k}"] = ami(area, labels[rows])
    return out


def as_regions(conference_map: ConferenceMap) -> dict[str, float]:
    """How far each topic is one region of the picture, and whether the names tell topics apart."""
    from sklearn.neighbors import NearestNeighbors

    xy = np.array([(p.x, p.y) for p in conference_map.papers])
    topic = np.array([p.topic for p in conference_map.papers])
    share = region_share(xy, topic)
    idx = NearestNeighbors(n_neighbors=16).fit(xy).kneighbors(xy, return_distance=False)
    words = [set().union(*map(name_keys, t.words)) if t.words else set() for t in conference_map.topics]
    heads = [name_keys(t.words[0]) if t.words else set() for t in conference_map.topics]
    pairs = [(a, b) for a in range(len(words)) for b in range(a + 1, len(words))]
    return {
        "region share, lowest topic": float(share.min()),
        "region share, median topic": float(np.median(share)),
        "topics under 0.8 in their region": float((share < 0.8).sum()),
        "map neighbours in the same topic": float((topic[idx[:, 1:]] == topic[:, None]).mean()),
        "topic pairs sharing a head word": float(sum(bool(heads[a] & heads[b]) for a, b in pairs)),
        "topic pairs sharing any name word": float(sum(bool(words[a] & words[b]) for a, b in pairs)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m eval.map_quality")
    parser.add_argument("--first", type=int, default=20, help="dev survey items, by id (0: all)")
    parser.add_argument("--names", type=int, default=20, help="random themes to print for judging by hand")
    parser.add_argument("--map", type=Path, default=None, help="a kept map.json to measure instead")
    args = parser.parse_args()
    settings = Settings()
    store = store_from_settings(settings, embedder_from_settings(settings))
    conference_map = (
        ConferenceMap.load(args.map, any_version=True)
        if args.map
        else ensure_map(map_folder(settings, store), store)
    )
    if conference_map is None:
        raise SystemExit(f"{args.map} is no readable map.json")
    papers, vectors = paper_vectors(store)
    ids = [p.id for p in papers]
    print(f"{len(ids)} papers, {len(conference_map.topics)} topics, {len(conference_map.themes)} themes")
    print("\ntopics as regions of the picture")
    for name, value in as_regions(conference_map).items():
        print(f"  {name:36s} {value:.3f}")
    print("\nAMI with the 21 primary areas")
    for name, value in agreement(conference_map, vectors, ids).items():
        print(f"  {name:22s} {value:.3f}")

    lists = survey_lists(args.first or None)
    rng = random.Random(0)
    randoms = [rng.sample(ids, len(p)) for p in lists for _ in range(20)]
    sizes = [len(p) for p in lists]
    print(f"\nsurvey lists: {len(lists)} dev items, {statistics.median(sizes):.0f} papers each (median)")
    print("share of a list's papers in its 3 most common ...   gold list   random list")
    for name, key in (("themes", "theme"), ("topics", "topic"), ("primary areas", "area")):
        label = {p.id: getattr(p, key) for p in conference_map.papers}
        print(f"  {name:16s} {top3_share(lists, label):36.3f} {top3_share(randoms, label):13.3f}")

    themes = rng.sample(conference_map.themes, min(args.names, len(conference_map.themes)))
    print(f"\n{len(themes)} random themes, to judge by hand (name, size, five titles)")
    for theme in themes:
        titles = [p.title for p in conference_map.papers if p.theme == theme.id]
        print(f"- {conference_map.theme_name(theme.id)} ({theme.size})")
        for title in rng.sample(titles, min(5, len(titles))):
            print(f"    {title}")


if __name__ == "__main__":
    main()
