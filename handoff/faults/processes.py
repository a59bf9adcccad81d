"""Faults that kill processes: the worker and its runtime, the app alone, the runtime alone."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

import psutil

from handoff import runtime_markers
from handoff.faults.base import Fault, FaultDidNotApply, FaultTarget
from handoff.processes import is_runtime, kill_all
from handoff.words import FaultKind

RUNTIME_EXIT_TIMEOUT = 10.0  # how long an orphaned runtime may take to end by itself


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


@dataclass(frozen=True)
class Kill(Fault):
    """SIGKILL where the worker is. ``worker``: the worker and its runtime in one signal,
    as when a machine or container dies. ``app``: only the worker (the app holding the
    SDK client); its runtime sees its pipe close and is left to end by itself, which is
    what makes the difference worth measuring."""

    at: str
    turn: int = 1
    target: str = "worker"
    heal_after: float | None = None
    kind = FaultKind.KILL

    @classmethod
    def from_plan(cls, plan) -> "Kill":
        return cls(plan.at, plan.turn, plan.target or "worker")

    async def inject(self, target: FaultTarget) -> str:
        process = target.process
        if process is None:
            raise FaultDidNotApply("kill: the step has no worker to kill")
        if self.target == "app":
            # Its runtime outlives it, out of the tree: note its in-use markers now, in case
            # it does not end by itself and the group kill below is what ends it.
            markers = runtime_markers.of(_descendants(process.pid))
            try:
                os.kill(process.pid, signal.SIGKILL)
                await target.tracker.wait_group_gone(process.pid, RUNTIME_EXIT_TIMEOUT)
                target.tracker.kill_tree(process.pid)
            finally:
                runtime_markers.remove(markers)
        else:
            target.tracker.kill_tree(process.pid)  # (it removes the killed runtimes' in-use markers too)
        await process.wait()
        return f"SIGKILL to the {'worker only' if self.target == 'app' else 'worker and its runtime'}"


@dataclass(frozen=True)
class KillRuntime(Fault):
    """SIGKILL to the runtime alone; the app that drives it lives on and sees what its SDK
    tells it."""

    at: str
    turn: int = 1
    heal_after: float | None = None
    kind = FaultKind.KILL_RUNTIME

    @classmethod
    def from_plan(cls, plan) -> "KillRuntime":
        return cls(plan.at, plan.turn)

    async def inject(self, target: FaultTarget) -> str:
        runtimes = [p for p in _descendants(target.process.pid) if is_runtime(p)] if target.process else []
        if not runtimes:
            raise FaultDidNotApply("kill-runtime: the step's worker has no runtime running")
        kill_all(runtimes)
        return f"SIGKILL to the runtime (pid {', '.join(str(p.pid) for p in runtimes)}); the app lives on"

