"""Names placed on the picture so that no two overprint.

Greedy, most papers first: a name goes at its region's anchor, else just above, below or beside
it; if no spot is free it is shortened (its first two words, then its first); if still nothing is
free it is left out at this size (the page shows it on zooming in). The page's script places its
names the same way (rag/map/page.html, `placeLabels`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

Size = Callable[[str], tuple[float, float]]  # a text's width and height, in the frame's units
GAP = 2.0  # clear space kept around each name, in the frame's units


@dataclass(frozen=True)
class Placed:
    index: int  # of the item in the input
    text: str
    x: float  # centre
    y: float
    width: float
    height: float

    def box(self) -> tuple[float, float, float, float]:
        return (
            self.x - self.width / 2,
            self.y - self.height / 2,
            self.x + self.width / 2,
            self.y + self.height / 2,
        )


def forms(words: Sequence[str], wrap: int = 0, unnamed: str = "") -> list[str]:
    """A name as written in full, then shortened: all its terms, the first two, the first. With
    `wrap`, a name longer than that many characters breaks into two lines. No words: `unnamed`."""
    out: list[str] = [unnamed] if unnamed and not words else []
    for n in range(len(words), 0, -1):
        text = " · ".join(words[:n])
        if wrap and len(text) > wrap and n > 1:
            text = " · ".join(words[: (n + 1) // 2]) + "\n" + " · ".join(words[(n + 1) // 2 : n])
        if text not in out:
            out.append(text)
    return out


def place(
    items: Sequence[tuple[float, float, Sequence[str]]],
    size: Size,
    frame: tuple[float, float, float, float],
) -> list[Placed]:
    """`items`: (x, y, forms longest first) in priority order. Returns the names placed, none
    overlapping another or leaving `frame` (x0, y0, x1, y1)."""
    placed: list[Placed] = []
    for i, (x, y, texts) in enumerate(items):
        spot = _first_free(i, x, y, texts, size, frame, placed)
        if spot is not None:
            placed.append(spot)
    return placed


def _first_free(i, x, y, texts, size: Size, frame, placed: list[Placed]) -> Placed | None:
    for text in texts:
        w, h = size(text)
        for dx, dy in ((0, 0), (0, -h), (0, h), (-w / 2, 0), (w / 2, 0), (0, -2 * h), (0, 2 * h)):
            # A name at the edge of the picture is moved in, not left out.
            cx = min(max(x + dx, frame[0] + w / 2 + GAP), frame[2] - w / 2 - GAP)
            cy = min(max(y + dy, frame[1] + h / 2 + GAP), frame[3] - h / 2 - GAP)
            spot = Placed(i, text, cx, cy, w + 2 * GAP, h + 2 * GAP)
            if _inside(spot.box(), frame) and not any(_overlap(spot.box(), p.box()) for p in placed):
                return spot
    return None


def _inside(box, frame) -> bool:
    return box[0] >= frame[0] and box[1] >= frame[1] and box[2] <= frame[2] and box[3] <= frame[3]


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def overlaps(placed: Sequence[Placed]) -> int:
    """Pairs of placed names whose boxes cross (0 when placed by `place`): for tests and checks."""
    return sum(_overlap(a.box(), b.box()) for n, a in enumerate(placed) for b in placed[n + 1 :])
