"""Topics as answers: "What are the biggest topics among the orals?" answered from the map's
clusters, counted within the filters the question says in words (or the chat's panel sets)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from rag import filters as flt
from rag.map.model import ConferenceMap

SHOWN = 10  # topics listed
THEMES_SHOWN = 3  # of each, its largest themes


@dataclass(frozen=True)
class TopicCount:
    name: str
    papers: int  # within the filters
    share: float  # of the papers within the filters
    themes: list[tuple[str, int]]  # its largest themes and their papers, within the filters

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.name, "papers": self.papers, "share": round(self.share, 4),
                "themes": [{"theme": n, "papers": c} for n, c in self.themes]}  # fmt: skip


def biggest_topics(conference_map: ConferenceMap, within: Collection[str] | None = None) -> list[TopicCount]:
    """The map's topics by how many papers of `within` (paper ids; None: all) they hold, largest first."""
    papers = [p for p in conference_map.papers if within is None or p.id in within]
    topics = Counter(p.topic for p in papers)
    themes = Counter((p.topic, p.theme) for p in papers)
    out = []
    for topic, n in sorted(topics.items(), key=lambda kv: (-kv[1], kv[0])):  # ties: the map's order
        own = sorted(((c, t) for (tp, t), c in themes.items() if tp == topic), reverse=True)
        out.append(TopicCount(conference_map.topics[topic].name, n, n / len(papers),
                              [(conference_map.themes[t].name, c) for c, t in own[:THEMES_SHOWN]]))  # fmt: skip
    return out


def topics_text(counts: list[TopicCount], filters: flt.Filters | None, all_topics: int) -> str:
    """The answer in words: the count of papers, then the largest topics with their counts."""
    total = sum(c.papers for c in counts)
    within = f" ({flt.describe(filters)})" if filters else ""
    if not total:
        return f"No indexed paper{within} is on the map of topics."
    head = (f"The biggest topics among the {total} indexed papers{within}, of {all_topics} topics "
            "on the map (clusters of the papers' abstracts, named by their most distinctive words):")  # fmt: skip
    lines = [head]
    for i, c in enumerate(counts[:SHOWN], 1):
        themes = "; ".join(f"{name} ({n})" for name, n in c.themes)
        lines.append(
            f"{i}. {c.name}: {c.papers} paper{'' if c.papers == 1 else 's'} ({c.share:.0%}); largest themes: {themes}"
        )
    return "\n".join(lines)
