"""A colour for each topic, so that topics that touch on the map look different.

Kenneth Kelly's 20 colours of maximum contrast (1965; white and black left out) are handed out
largest topic first: each topic takes the unused colour farthest (in RGB) from the colours of the
topics it borders, weighted by how long the border is. With more than 20 topics, colours repeat,
never across a border if another is free."""

from __future__ import annotations

import numpy as np

KELLY = ["#F3C300", "#875692", "#F38400", "#A1CAF1", "#BE0032", "#C2B280", "#848482", "#008856",
         "#E68FAC", "#0067A5", "#F99379", "#604E97", "#F6A600", "#B3446C", "#DCD300", "#882D17",
         "#8DB600", "#654522", "#E25822", "#2B3D26"]  # fmt: skip


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.float64)


def _apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How different colours look ("redmean", a cheap stand-in for a perceptual distance)."""
    mean_red = (a[..., 0] + b[..., 0]) / 2
    d = a - b
    return np.sqrt(
        (2 + mean_red / 256) * d[..., 0] ** 2
        + 4 * d[..., 1] ** 2
        + (2 + (255 - mean_red) / 256) * d[..., 2] ** 2
    )


def _clash(border: np.ndarray, taken: np.ndarray, candidate: np.ndarray) -> float:
    """How much a candidate colour clashes with bordering colours: the nearest one decides, and a
    long border counts more than a corner (0 when nothing borders)."""
    touching = border > 0
    if not touching.any():
        return 0.0
    return float((border[touching] / (_apart(taken[touching], candidate) + 1.0)).max())


def assign(border: np.ndarray, palette: list[str] = KELLY) -> list[str]:
    """A colour for each cluster (numbered largest first); `border[a, b]` = how much a and b touch."""
    rgb = np.stack([_rgb(c) for c in palette])
    chosen: list[int] = []
    for c in range(len(border)):
        unused = [i for i in range(len(palette)) if i not in chosen] or list(range(len(palette)))
        weights = border[c, : len(chosen)].astype(np.float64)
        taken = rgb[chosen] if chosen else np.zeros((0, 3))
        chosen.append(min(unused, key=lambda i: (_clash(weights, taken, rgb[i]), i)))
    return [palette[i] for i in chosen]
