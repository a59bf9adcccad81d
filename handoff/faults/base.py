"""What every fault is: something done to a step (``inject``) and, for faults that end,
undone (``heal``), aimed at a :class:`FaultTarget`. A fault that could not do what it says
raises :class:`FaultDidNotApply`."""

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
