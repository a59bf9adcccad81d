"""The step driver: one step, start to end, on one host.

It starts the step's worker on its host, feeds it its spec, reads its events line by
line until the worker's stdout ends, and keeps every line as the worker wrote it, with
its event (all through handoff/worker_process.py, as the bench runs its workers). It
owns the step's time limit and the step's fault points, where the scenario's nemesis
(nemesis.py) injects the step's faults: before the worker starts; while the model
answers turn N (the witness holds that answer until the faults are in); and wherever the
worker says ``holding`` (after turn N, inside turn N's store write), after which a worker
still alive is released to go on. Whatever happens, the worker and everything it started
are killed and reaped before it returns, and what was seen is in the returned
:class:`StepRecord` — a dead, silent or babbling worker is recorded, never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from pathlib import Path

from handoff.confined import inside
from handoff.coordinator.nemesis import Nemesis
from handoff.faults.base import Fault, FaultTarget
from handoff.hosts.base import Host, Launch
from handoff.processes import ProcessTracker
from handoff.protocol import RELEASE, Event, Holding, WorkerSpec
from handoff.runs.record import StepRecord
from handoff.witness.control import WitnessControl
from handoff.words import TURN_POINTS, FaultPoint
from handoff.worker_process import WorkerProcess

STDERR_KEPT = 2000  # characters of a worker's stderr kept in the record
FULL_DISK_BYTES = 1 << 20  # less free space than this at a step's end is worth a note


def _full_disks(*places: Path) -> list[str]:
    """A worker whose disk is full may not be able to say so (its log is on that disk):
    say it for it."""
    notes = []
    for place in places:
        with contextlib.suppress(OSError):
            free = shutil.disk_usage(place).free
            if free < FULL_DISK_BYTES:
                notes.append(f"the file system holding {place} is full ({free} bytes free): the worker's files "
                             f"(its log, the session's home) could not be written there")
    return list(dict.fromkeys(notes))


class StepDriver:
    def __init__(self, tracker: ProcessTracker, timeout: float, nemesis: Nemesis, witness: WitnessControl | None):
        self.tracker = tracker
        self.timeout = timeout
        self.nemesis = nemesis
        self.witness = witness  # holds the model's answer for a fault while it answers

    async def run(self, spec: WorkerSpec, host: Host, home: Path, workdir: Path, record: StepRecord,
                  faults: tuple[Fault, ...], target: FaultTarget, launch: Launch = Launch()) -> StepRecord:
        """Run the step; ``record`` (already naming the step) is filled in and returned.
        ``launch`` says how the worker is started (a container's home or restart, another
        SDK or runtime version)."""
        record.started_at = time.time()
        await self.nemesis.prepare(faults, target)
        await self.nemesis.inject(faults, FaultPoint.BEFORE_STEP, None, target, record)
        mid_turn = [fault for fault in faults if fault.at == FaultPoint.MID_TURN]
        for fault in mid_turn:
            await self.witness.hold(spec.scenario, spec.step, fault.turn)
        worker = None
        try:
            async with WorkerProcess.started(
                    self.tracker, inside(workdir, f"worker-{spec.step}.stderr"),
                    lambda stderr: host.start_worker(self.tracker, home, stderr, workdir / "cwd", launch)) as worker:
                record.lines = worker.said.lines  # kept as they come, whatever ends the step
                target.process = worker.process
                watchers = [asyncio.create_task(self._while_answering(spec, fault, faults, target, record))
                            for fault in mid_turn]
                try:
                    await worker.feed(spec.to_json())
                    await worker.run(self.timeout, lambda event: self._heard(event, worker, faults, target, record))
                finally:
                    for watcher in watchers:
                        watcher.cancel()
        finally:
            if worker is not None:  # it started, and is reaped now
                record.heard(worker.said)
                record.timed_out, record.exit_code, record.killed_cpu_s = (worker.timed_out, worker.exit_code,
                                                                           worker.killed_cpu)
            for fault in mid_turn:  # no answer stays held after its step
                with contextlib.suppress(OSError):
                    await self.witness.release(spec.scenario, spec.step, fault.turn)
        await self.nemesis.step_ended(record)
        record.stderr_tail = worker.stderr_tail(STDERR_KEPT)
        record.notes.extend(_full_disks(workdir, home))
        record.ended_at = time.time()
        return record

    async def _heard(self, event: Event, worker: WorkerProcess, faults: tuple[Fault, ...], target: FaultTarget,
                     record: StepRecord) -> None:
        """A worker that says ``holding`` gets its faults, then (if it was not killed) goes on."""
        if isinstance(event, Holding):
            turn = event.turn if event.point in TURN_POINTS else None  # "hold" is a place, not a turn
            await self.nemesis.inject(faults, event.point, turn, target, record)
            await worker.tell(RELEASE)

    async def _while_answering(self, spec: WorkerSpec, fault: Fault, faults: tuple[Fault, ...], target: FaultTarget,
                               record: StepRecord) -> None:
        """Once the turn's request has reached the model (its answer held), inject the
        turn's mid-turn faults, then let the answer go."""
        if not await self.witness.held(spec.scenario, spec.step, fault.turn, self.timeout):
            return
        await self.nemesis.inject(faults, FaultPoint.MID_TURN, fault.turn, target, record)
        await self.witness.release(spec.scenario, spec.step, fault.turn)
