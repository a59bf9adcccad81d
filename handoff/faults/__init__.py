"""Faults: what the step driver does to a step at its named fault points.

A fault is a small object with a ``kind``, the ``point`` where it strikes, and
``inject`` (and, for faults that end, ``heal``). The step driver
(handoff/coordinator/step_driver.py) calls them at its fault points and records every
injection with its time in the run record; a fault that could not do what it says
raises :class:`FaultDidNotApply`, which ends the scenario as *crashed* — a fault that
did not happen must never pass as if it had.

The points:

* ``before-step`` — before the step's worker starts (edit the stored log);
* ``after-turn`` — the worker answered a turn and now waits, holding (a crash);
* ``inside-write`` — the worker holds inside an append to the store, before it commits.

Which faults a step gets is scenario data (:func:`faults_for`).
"""

from __future__ import annotations

import json
import os
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import psutil

from handoff import runtime_markers
from handoff.fact import Fact
from handoff.processes import ProcessTracker
from handoff.protocol import AFTER_TURN, INSIDE_WRITE
from handoff.scenario import Step
from handoff.stores import session_state

RUNTIME_EXIT_TIMEOUT = 10.0  # how long an orphaned runtime may take to end by itself
TAMPERED_VALUE = "Tampered Value"


class FaultPoint(StrEnum):
    BEFORE_STEP = "before-step"
    AFTER_TURN = AFTER_TURN
    INSIDE_WRITE = INSIDE_WRITE


class FaultDidNotApply(Exception):
    """The fault could not do what it says (nothing to kill, nothing to edit)."""


@dataclass
class FaultTarget:
    """What a fault may act on: the step's worker (once it runs), its home and session."""

    tracker: ProcessTracker
    home: Path
    session_id: str | None
    fact: Fact
    process: Any = None  # the worker's process (pid, wait()), from its start on


class Fault(ABC):
    kind: str
    point: FaultPoint

    @abstractmethod
    async def inject(self, target: FaultTarget) -> str:
        """Do it; returns a few words on what was done, for the run record."""

    async def heal(self, target: FaultTarget) -> None:
        """Undo it, for faults that end (none of the kinds here)."""


@dataclass(frozen=True)
class Kill(Fault):
    """SIGKILL the worker where it holds. ``process-tree``: the worker and its runtime in
    one signal, as when a machine or container dies. ``sdk-process``: only the worker
    (the app holding the SDK client); its runtime sees its pipe close and is left to end
    by itself, which is what makes the difference worth measuring."""

    point: FaultPoint
    scope: str = "process-tree"
    kind = "kill"

    async def inject(self, target: FaultTarget) -> str:
        process = target.process
        if process is None:
            raise FaultDidNotApply("kill: the step has no worker to kill")
        if self.scope == "sdk-process":
            # Its runtime outlives it, out of the tree: note its in-use markers now, in case
            # it does not end by itself and the group kill below is what ends it.
            markers = runtime_markers.held_by(_descendants(process.pid))
            try:
                os.kill(process.pid, signal.SIGKILL)
                await target.tracker.wait_group_gone(process.pid, RUNTIME_EXIT_TIMEOUT)
                target.tracker.kill_tree(process.pid)
            finally:
                runtime_markers.remove(markers)
        else:
            target.tracker.kill_tree(process.pid)  # (it removes the killed runtimes' in-use markers too)
        await process.wait()
        return f"SIGKILL to the {'worker only' if self.scope == 'sdk-process' else 'worker and its runtime'}"


@dataclass(frozen=True)
class Tamper(Fault):
    """Edit the stored log as someone with write access to the store could: wherever an
    event states the fact, it now states another value. Events are parsed and written
    back as JSON, so quotes and backslashes in the value are handled as the runtime
    wrote them; an edit that finds nothing to change fails loudly."""

    point: FaultPoint = FaultPoint.BEFORE_STEP
    kind = "tamper"

    async def inject(self, target: FaultTarget) -> str:
        log = session_state(target.home, target.session_id or "") / "events.jsonl"
        if not log.is_file():
            raise FaultDidNotApply(f"tamper: there is no event log for session {target.session_id!r} to edit")
        stated = target.fact.stated_text
        replacement = Fact(TAMPERED_VALUE, target.fact.topic).stated_text
        edited, lines = 0, log.read_bytes().split(b"\n")
        for index, line in enumerate(lines):
            if not line.strip():
                continue
            event = json.loads(line)
            changed = _replaced(event, stated, replacement)
            if changed != event:
                lines[index] = json.dumps(changed, ensure_ascii=False, separators=(",", ":")).encode()
                edited += 1
        if not edited:
            raise FaultDidNotApply(f"tamper: no event in the log states the fact ({stated!r}): nothing was changed")
        log.write_bytes(b"\n".join(lines))
        return f"{edited} event(s) now state {TAMPERED_VALUE!r}"


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _replaced(value: Any, old: str, new: str) -> Any:
    """``value`` (parsed JSON) with ``old`` replaced by ``new`` in every string in it."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replaced(item, old, new) for item in value]
    if isinstance(value, dict):
        return {key: _replaced(item, old, new) for key, item in value.items()}
    return value


def faults_for(step: Step) -> tuple[Fault, ...]:
    """The faults a scenario step asks for."""
    faults: list[Fault] = []
    if step.tamper:
        faults.append(Tamper())
    if "hold" in step.actions:
        faults.append(Kill(FaultPoint.AFTER_TURN, step.crash))
    if "crash-mid-append" in step.actions:
        faults.append(Kill(FaultPoint.INSIDE_WRITE, step.crash))
    return tuple(faults)


async def inject_all(faults: tuple[Fault, ...], point: FaultPoint, target: FaultTarget) -> list[tuple[Fault, float, str]]:
    """Inject every fault of ``point``, in order: (fault, when, what it did) for each."""
    done = []
    for fault in faults:
        if fault.point == point:
            at = time.time()
            done.append((fault, at, await fault.inject(target)))
    return done
