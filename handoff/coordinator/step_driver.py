"""The step driver: one step, start to end, on one host.

It starts the step's worker on its host, feeds it its spec, reads its events line by
line until the worker's stdout ends, and keeps every line as the worker wrote it. It
owns the step's time limit and the step's fault points: before the worker starts, and
wherever the worker says ``holding`` (after a turn, inside a store write). Whatever
happens, the worker and everything it started are killed and reaped before it returns,
and what was seen is in the returned :class:`StepRecord` — a dead, silent or babbling
worker is recorded, never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from pathlib import Path

from handoff.faults import Fault, FaultPoint, FaultTarget, inject_all
from handoff.hosts import Host, Launch
from handoff.processes import ProcessTracker
from handoff.protocol import Holding, ProtocolViolation, WorkerSpec, decode
from handoff.runs.record import FaultRecord, StepRecord

WORKER_EXIT_GRACE_SECONDS = 5.0  # from a worker's last output to its exit, which normally takes milliseconds
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
    def __init__(self, tracker: ProcessTracker, timeout: float):
        self.tracker = tracker
        self.timeout = timeout

    async def run(self, spec: WorkerSpec, host: Host, home: Path, workdir: Path, record: StepRecord,
                  faults: tuple[Fault, ...], target: FaultTarget, launch: Launch = Launch()) -> StepRecord:
        """Run the step; ``record`` (already naming the step) is filled in and returned.
        ``launch`` says how the worker is started (a container's home or restart, another
        SDK or runtime version)."""
        record.started_at = time.time()
        await self._inject(faults, FaultPoint.BEFORE_STEP, target, record)
        stderr_path = workdir / f"worker-{spec.step}.stderr"
        with stderr_path.open("wb") as stderr:
            process = await host.start_worker(self.tracker, home, stderr, workdir / "cwd", launch)
            target.process = process
            try:
                process.stdin.write(spec.to_json())
                await process.stdin.drain()
                process.stdin.close()
                try:
                    await asyncio.wait_for(self._read(process, record, faults, target), self.timeout)
                except asyncio.TimeoutError:
                    record.timed_out = True
                else:
                    # Its output has ended; a forked host worker's outer process may need a
                    # moment more to pass the exit status on. Whatever is left then is killed.
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(process.wait(), WORKER_EXIT_GRACE_SECONDS)
            finally:
                self.tracker.kill_tree(process.pid)
                record.exit_code = await process.wait()
                self.tracker.forget(process.pid)
        record.stderr_tail = stderr_path.read_text(errors="replace")[-STDERR_KEPT:]
        record.notes.extend(_full_disks(workdir, home))
        record.ended_at = time.time()
        return record

    async def _read(self, process, record: StepRecord, faults: tuple[Fault, ...], target: FaultTarget) -> None:
        async for raw in process.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            record.lines.append(line)
            try:
                event = decode(line)
            except ProtocolViolation:
                continue  # kept as it came; the checker reports it as this step's protocol error
            if isinstance(event, Holding) and event.point in FaultPoint.__members__.values():
                await self._inject(faults, FaultPoint(event.point), target, record)

    @staticmethod
    async def _inject(faults: tuple[Fault, ...], point: FaultPoint, target: FaultTarget, record: StepRecord) -> None:
        for fault, at, detail in await inject_all(faults, point, target):
            record.faults.append(FaultRecord(fault.kind, point.value, at, detail=detail))
