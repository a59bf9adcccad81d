"""Small statistics for repeated timings: medians with their range, ratios, a line fit.

Medians, not means: a run disturbed by another process on a 2-core machine is an outlier
that should move the summary as little as possible, while the min–max range still shows
that it happened.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Summary:
    """The median of some samples and their range."""

    median: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, samples: Iterable[float]) -> "Summary | None":
        values = [float(v) for v in samples if v is not None]
        if not values:
            return None
        return cls(statistics.median(values), min(values), max(values), len(values))

    def format(self, unit: str = "", digits: int = 0, scale: float = 1.0) -> str:
        """``1234 (1100–1400)``: the median, then the range when there is one."""
        median, low, high = self.median * scale, self.low * scale, self.high * scale
        text = f"{median:.{digits}f}{unit}"
        if self.count > 1:
            text += f" ({low:.{digits}f}–{high:.{digits}f})"
        return text


def fmt(summary: Summary | None, unit: str = "", digits: int = 0, scale: float = 1.0) -> str:
    return "—" if summary is None else summary.format(unit, digits, scale)


def ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Pairwise ratios of samples measured side by side (same pair, same machine state);
    pairs where either side is missing are left out."""
    return [n / d for n, d in zip(numerators, denominators) if n is not None and d]


@dataclass(frozen=True)
class LineFit:
    """y = intercept + slope * x by least squares, and how well a line explains y."""

    slope: float
    intercept: float
    r_squared: float

    def predict(self, x: float) -> float:
        return self.intercept + self.slope * x


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> LineFit | None:
    if len(xs) < 2 or len(set(xs)) < 2:
        return None
    slope, intercept = statistics.linear_regression(xs, ys)
    if len(set(ys)) < 2:
        return LineFit(slope, intercept, 1.0)
    r = statistics.correlation(xs, ys)
    return LineFit(slope, intercept, r * r)


def percentile(values: Sequence[float], p: float) -> float | None:
    """The p-th percentile (0-100) by linear interpolation between the closest ranks; with
    few samples p95 and p99 are close to the maximum, which is what they then honestly are."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
