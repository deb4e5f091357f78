"""The conference map as typed records, kept as one JSON file beside the index."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MAP_VERSION = 3  # bump when layout, clustering or naming change: older maps are built again


@dataclass(frozen=True)
class MapPaper:
    id: str
    title: str
    url: str
    area: str
    status: str
    x: float  # layout position, both axes in [0, 1]
    y: float
    topic: int
    theme: int


@dataclass(frozen=True)
class Cluster:
    """A topic (broad, `parent` None) or a theme (fine, inside topic `parent`)."""

    id: int
    words: list[str]  # its most distinctive words, best first (c-TF-IDF)
    size: int
    x: float  # where its name sits on the map: inside its region (regions.anchor)
    y: float
    parent: int | None = None
    colour: str = ""  # topics: their colour on the map (rag/map/colours.py); themes: their topic's

    @property
    def name(self) -> str:
        return " · ".join(self.words) or f"cluster {self.id + 1}"


@dataclass
class ConferenceMap:
    signature: str  # the index generation it was made from (see build.signature)
    papers: list[MapPaper]
    topics: list[Cluster]
    themes: list[Cluster]
    seconds: float = 0.0  # how long building it took
    info: dict[str, Any] = field(default_factory=dict)  # method and sizes, for the docs
    _by_id: dict[str, MapPaper] = field(default_factory=dict, init=False, repr=False, compare=False)

    def paper(self, paper_id: str) -> MapPaper | None:
        if len(self._by_id) != len(self.papers):  # built on first use (a survey list asks per paper)
            self._by_id = {p.id: p for p in self.papers}
        return self._by_id.get(paper_id)

    def theme_name(self, theme: int) -> str:
        """ "topic › theme", the theme's words after its topic's."""
        t = self.themes[theme]
        parent = self.topics[t.parent].name if t.parent is not None else ""
        return f"{parent} › {t.name}" if parent else t.name

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "version": MAP_VERSION,
            "signature": self.signature,
            "seconds": self.seconds,
            "info": self.info,
            "topics": [asdict(c) for c in self.topics],
            "themes": [asdict(c) for c in self.themes],
            # Papers as rows of a table: a third the size of a list of objects.
            "paper_fields": list(MapPaper.__dataclass_fields__),
            "papers": [list(asdict(p).values()) for p in self.papers],
        }
        # A file of its own per writer (an ingest and the Map tab may lay out at once), then one
        # rename: a reader never sees half a map.
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, any_version: bool = False) -> ConferenceMap | None:
        """The map at `path`, or None when there is none, it is unreadable or of another version
        (`any_version`: an older map too, to measure it beside today's)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != MAP_VERSION and not any_version:
                return None
            names = data["paper_fields"]
            return cls(
                signature=data["signature"],
                papers=[MapPaper(**dict(zip(names, row))) for row in data["papers"]],
                topics=[Cluster(**c) for c in data["topics"]],
                themes=[Cluster(**c) for c in data["themes"]],
                seconds=float(data.get("seconds", 0.0)),
                info=data.get("info", {}),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None
