"""The nemesis of one scenario: the faults in flight, their heals, and the record of both.

The step driver asks it to inject a step's faults at each fault point; it records every
injection in the step's record with its time, heals each fault after its delay (or, by
default, when its step ends), and heals whatever is still open when the scenario ends —
on a crash or an interrupt too — so no server stays stopped, no route stays cut, no
filler stays on a disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

import msgspec

from handoff.faults import Fault, FaultTarget
from handoff.faults.machines import release_small_disk
from handoff.runs.record import FaultRecord, StepRecord


@dataclass
class _Open:
    fault: Fault
    target: FaultTarget
    record: StepRecord
    index: int  # of its FaultRecord in record.faults


class Nemesis:
    def __init__(self) -> None:
        self._open: list[_Open] = []
        self._timers: list[asyncio.Task] = []
        self._homes: set = set()  # homes made small disks, released when the scenario ends

    async def prepare(self, faults: tuple[Fault, ...], target: FaultTarget) -> None:
        for fault in faults:
            await fault.prepare(target)
            if fault.kind == "disk-full":
                self._homes.add(target.home)

    async def inject(self, faults: tuple[Fault, ...], point: str, turn: int | None, target: FaultTarget,
                     record: StepRecord) -> None:
        """Inject the faults of ``point`` (of ``turn``, for the points inside a turn)."""
        for fault in faults:
            if fault.at != point or (turn is not None and fault.turn != turn):
                continue
            at = time.time()
            detail = await fault.inject(target)
            record.faults.append(FaultRecord(fault.kind, point, at, detail=detail))
            opened = _Open(fault, target, record, len(record.faults) - 1)
            self._open.append(opened)
            if fault.heal_after is not None:
                self._timers.append(asyncio.create_task(self._heal_later(opened, fault.heal_after)))

    async def _heal_later(self, opened: _Open, seconds: float) -> None:
        await asyncio.sleep(seconds)
        await self._heal(opened)

    async def _heal(self, opened: _Open) -> None:
        if opened not in self._open:
            return
        self._open.remove(opened)
        healed_at: float | None = time.time()
        try:
            detail = await opened.fault.heal(opened.target)
        except Exception as error:  # recorded, not raised: the other faults still heal
            detail, healed_at = f"the heal failed: {' '.join(str(error).split())}", None
        if detail is not None:
            faults = opened.record.faults
            faults[opened.index] = msgspec.structs.replace(faults[opened.index], healed_at=healed_at,
                                                           detail=f"{faults[opened.index].detail}; {detail}")

    async def step_ended(self, record: StepRecord) -> None:
        """Heal the step's faults that heal when their step ends."""
        for opened in [o for o in self._open if o.record is record and o.fault.heal_after is None]:
            await self._heal(opened)

    async def close(self) -> None:
        """Heal everything still open, whatever happened (best effort, each on its own)."""
        for timer in self._timers:
            timer.cancel()
        for opened in list(self._open):
            with contextlib.suppress(Exception):
                await self._heal(opened)
        for home in self._homes:
            await asyncio.to_thread(release_small_disk, home)
