"""The map as a picture (PNG, matplotlib) and as one self-contained HTML page (its script, style
and data inline: nothing is fetched, so it works offline and from a file)."""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib import resources
from pathlib import Path

from rag.map.labels import Placed, forms, place
from rag.map.model import ConferenceMap, MapPaper

# The page's palette, so the picture and the page colour a topic alike.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
           "#e6550d", "#31a354", "#756bb1", "#636363", "#6baed6", "#fd8d3c", "#74c476", "#9e9ac8",
           "#969696", "#9c9ede", "#cedb9c", "#e7ba52", "#e7969c", "#de9ed6"]  # fmt: skip


def topic_colour(conference_map: ConferenceMap, topic: int) -> str:
    return conference_map.topics[topic].colour or PALETTE[topic % len(PALETTE)]


def page_data(conference_map: ConferenceMap) -> str:
    """The map as the page reads it, safe inside a <script> element."""
    data = {
        "paper_fields": list(MapPaper.__dataclass_fields__),
        "papers": [list(asdict(p).values()) for p in conference_map.papers],
        "topics": [asdict(c) for c in conference_map.topics],
        "themes": [asdict(c) for c in conference_map.themes],
    }
    # "</" would end the script element early; "\u003c" reads back as "<".
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")


def write_html(conference_map: ConferenceMap, path: Path, title: str) -> Path:
    template = resources.files("rag.map").joinpath("page.html").read_text(encoding="utf-8")
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;")
    page = template.replace("__TITLE__", safe_title).replace("__DATA__", page_data(conference_map))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def write_png(conference_map: ConferenceMap, path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.patheffects as pe
    import matplotlib.pyplot as plt

    papers = conference_map.papers
    fig, ax = plt.subplots(figsize=(12, 12), dpi=100)
    ax.scatter([p.x for p in papers], [p.y for p in papers], s=4 if len(papers) > 2000 else 14,
               c=[topic_colour(conference_map, p.topic) for p in papers], alpha=0.65, linewidths=0)  # fmt: skip
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(1.02, -0.02)  # the page draws y downwards; the picture matches it
    ax.set_axis_off()
    ax.set_title(f"{title}: {len(papers)} papers, {len(conference_map.topics)} topics", fontsize=13)
    fig.tight_layout()
    _names(fig, ax, conference_map, halo=[pe.withStroke(linewidth=3.5, foreground="white")])
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _names(fig, ax, conference_map: ConferenceMap, halo) -> list[Placed]:
    """Each topic's name on its region, largest topic first, none over another (rag/map/labels.py)."""
    renderer = fig.canvas.get_renderer()
    style = {"ha": "center", "va": "center", "fontsize": 10.5, "weight": "bold", "linespacing": 1.05}

    def size(text: str) -> tuple[float, float]:
        probe = ax.text(0, 0, text, transform=None, **style)
        box = probe.get_window_extent(renderer)
        probe.remove()
        return box.width, box.height

    topics = sorted(conference_map.topics, key=lambda t: -t.size)
    spots = [(*ax.transData.transform((t.x, t.y)), forms(t.words, wrap=24, unnamed=t.name)) for t in topics]
    frame = ax.get_window_extent(renderer).extents
    placed = place(spots, size, tuple(frame))
    for spot in placed:
        ax.text(spot.x, spot.y, spot.text, transform=None, color="#111", path_effects=halo, **style)
    return placed
