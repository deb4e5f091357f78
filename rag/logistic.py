"""A logistic regression over named features, as the project's learned decisions ship it (the
answer selector, the survey list's decision): weights in JSON, scored with the standard library."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Logistic:
    """p = sigmoid(b + sum w_i (x_i - mean_i) / scale_i) over named features (a missing one: its mean)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weight: tuple[float, ...]
    bias: float

    @classmethod
    def from_json(cls, d: dict) -> Logistic:
        return cls(tuple(d["features"]), tuple(d["mean"]), tuple(d["scale"]), tuple(d["weight"]), d["bias"])

    def to_json(self) -> dict:
        return dict(features=list(self.features), mean=list(self.mean), scale=list(self.scale),
                    weight=list(self.weight), bias=self.bias)  # fmt: skip

    def pushes(self, x: dict[str, float]) -> dict[str, float]:
        """Each feature's term of the log-odds."""
        return {
            f: w * (x.get(f, m) - m) / (s or 1.0)
            for f, m, s, w in zip(self.features, self.mean, self.scale, self.weight)
        }

    def p(self, x: dict[str, float]) -> float:
        z = self.bias + sum(self.pushes(x).values())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
