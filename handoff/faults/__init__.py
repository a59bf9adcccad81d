"""Faults as data: what the step driver does to a step, where, and when it heals (the nemesis).

A scenario states its faults (``[[steps.faults]]``, checked against kinds.py); here each
kind is one small class with ``inject`` and, for faults that end, ``heal``. The step
driver (handoff/coordinator/step_driver.py) injects them at its fault points — before the
step, while the model answers turn N, after turn N, inside turn N's write to the store —
and heals them after their delay or when the step ends; whatever is still unhealed when a
scenario ends (also on a crash or an interrupt) is healed then. Every injection and heal
is recorded with its time in the run record.

A fault that could not do what it says raises :class:`FaultDidNotApply`, which ends the
scenario as *crashed*: a fault that did not happen must never pass as if it had.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from handoff.fact import Fact
from handoff.processes import ProcessTracker
from handoff.words import FaultKind

TAMPERED_VALUE = "Tampered Value"


class FaultDidNotApply(Exception):
    """The fault could not do what it says (nothing to kill, nothing to edit, no server)."""


@dataclass
class FaultTarget:
    """What a step's faults may act on."""

    tracker: ProcessTracker
    home: Path  # the step's home on this machine
    session_id: str | None
    fact: Fact
    host: Any = None  # the step's Host
    database: Any = None  # the run's throwaway PostgreSQL (ThrowawayPostgres), when it has one
    ports: dict[str, int] = field(default_factory=dict)  # "database", "model": where the host reaches them
    process: Any = None  # the worker's process (pid, wait()), from its start on


class Fault(ABC):
    kind: FaultKind
    at: str  # a FaultPoint
    turn: int
    heal_after: float | None  # seconds after the injection; None: when the step ends

    async def prepare(self, target: FaultTarget) -> None:
        """Set up what the fault needs before the step's worker starts (most need nothing)."""

    @abstractmethod
    async def inject(self, target: FaultTarget) -> str:
        """Do it; returns a few words on what was done, for the run record."""

    async def heal(self, target: FaultTarget) -> str | None:
        """Undo it; returns what was done, or None for a fault that does not heal."""
        return None


def build(plan) -> Fault:
    """The fault a scenario's plan (handoff.scenario.FaultPlan) asks for."""
    from handoff.faults.logs import CorruptLog, CutCopy, Tamper, TearLog
    from handoff.faults.machines import DiskFull, Partition, StoreOutage, StoreRestart
    from handoff.faults.processes import Kill, KillRuntime

    kinds = {kind.kind: kind for kind in (Kill, KillRuntime, StoreOutage, StoreRestart, Partition, DiskFull, TearLog,
                                          CorruptLog, CutCopy, Tamper)}
    return kinds[plan.kind].from_plan(plan)


__all__ = ["TAMPERED_VALUE", "Fault", "FaultDidNotApply", "FaultTarget", "build"]
