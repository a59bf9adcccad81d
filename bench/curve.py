"""The arithmetic of a throughput curve, shared by the local curve and the hosts curve
(bench/scale.py, bench/scale_hosts.py): one row per level, the CPU bound, the knee.
Pure functions of what was measured, so they are unit-tested apart from any run."""

from __future__ import annotations

from dataclasses import dataclass

from bench.stats import percentile

KNEE_GAIN = 1.10  # a level past the knee adds less than 10 % handoffs/s


def headers(cores: int) -> list[str]:
    return ["at a time", "handoffs", "handoffs/s", "latency p50, s", "p95, s", "p99, s", "CPU-s per handoff",
            f"CPU bound ({cores} cores / CPU-s), handoffs/s", "of the bound", "lost"]


@dataclass
class Level:
    """One level of a curve: ``count`` handoffs, ``level`` at a time, in ``seconds``."""

    level: int
    count: int
    seconds: float
    latencies: list[float]  # seconds, one per handoff
    cpu_s: float  # every CPU second counted for the batch
    lost: int
    cores: int

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds else 0.0

    @property
    def cpu_per(self) -> float:
        return self.cpu_s / self.count if self.count else 0.0

    @property
    def bound(self) -> float:
        """No scheduling gets more handoffs per second out of these cores."""
        return self.cores / self.cpu_per if self.cpu_per else 0.0

    @property
    def of_bound(self) -> float | None:
        return self.rate / self.bound if self.bound else None

    def row(self) -> list[str]:
        return [str(self.level), str(self.count), f"{self.rate:.2f}",
                *(f"{percentile(self.latencies, p):.2f}" for p in (50, 95, 99)),
                f"{self.cpu_per:.2f}", f"{self.bound:.2f}",
                f"{self.of_bound:.0%}" if self.of_bound is not None else "—", str(self.lost)]


def knee(levels: list[Level]) -> Level | None:
    """The level after which more at a time stops paying: the first whose next level adds
    less than KNEE_GAIN in handoffs/s. None when every level still gained (no knee within
    the levels measured)."""
    for here, following in zip(levels, levels[1:]):
        if following.rate < here.rate * KNEE_GAIN:
            return here
    return None


def rotation(number: int, hosts: int) -> tuple[int, int]:
    """The hosts handoff ``number`` runs its A and B steps on: A on ``number % hosts``, B
    on the next one, so every host both writes sessions and resumes other hosts' sessions."""
    return number % hosts, (number + 1) % hosts
