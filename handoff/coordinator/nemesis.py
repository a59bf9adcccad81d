"""The nemesis of one scenario: the faults in flight, their heals, and the record of both.

The step driver asks it to inject a step's faults at each fault point; it records every
injection in the step's record with its time, heals each fault after its delay (or, by
default, when its step ends), and heals whatever is still open when the scenario ends —
on a crash or an interrupt too — so no server stays stopped, no route stays cut, no
filler stays on a disk.

An interrupt cancels the run at whatever ``await`` it is at, and that can be the middle
of a change the nemesis makes to a machine. A change cut off there goes on without its
bookkeeping (the thread that mounts a small disk is not stopped by a cancellation), so
nothing would undo it: a Ctrl-C that landed while a disk-full fault mounted its file
system left the mount, and the run's directory under it, behind. So every change —
preparing, injecting, healing, releasing — runs to its end with its bookkeeping before
a cancellation goes on (:func:`to_the_end`), and :meth:`Nemesis.close` waits for every
change still under way before it heals what is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Awaitable, TypeVar

import msgspec

from handoff.faults.base import Fault, FaultTarget
from handoff.faults.machines import release_small_disk
from handoff.runs.record import FaultRecord, StepRecord

T = TypeVar("T")


async def to_the_end(work: Awaitable[T]) -> T:
    """Await ``work`` to its end even when this task is cancelled meanwhile (once or more),
    then let the cancellation go on. Only ``work`` being cancelled itself stops it early."""
    future = asyncio.ensure_future(work)
    interrupted: asyncio.CancelledError | None = None
    while not future.done():
        try:
            await asyncio.wait((future,))  # unlike awaiting it, being cancelled does not cancel it
        except asyncio.CancelledError as error:
            interrupted = interrupted or error
    if interrupted is not None:
        if not future.cancelled():
            future.exception()  # taken, so it is not logged as never retrieved: the interrupt is what goes on
        raise interrupted
    return future.result()


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
        self._busy: set[asyncio.Future] = set()  # injections under way, which close waits for
        self._homes: set = set()  # homes made small disks, released when the scenario ends

    async def prepare(self, faults: tuple[Fault, ...], target: FaultTarget) -> None:
        for fault in faults:
            if fault.kind == "disk-full":
                # Noted before the mount is made: one that fails half way is released too.
                self._homes.add(target.home)
            await to_the_end(fault.prepare(target))

    async def inject(self, faults: tuple[Fault, ...], point: str, turn: int | None, target: FaultTarget,
                     record: StepRecord) -> None:
        """Inject the faults of ``point`` (of ``turn``, for the points inside a turn)."""
        for fault in faults:
            if fault.at != point or (turn is not None and fault.turn != turn):
                continue
            # A mid-turn injection runs in a task the step driver cancels and does not wait
            # for: close waits for it instead, so that it is open (and healed) before then.
            injecting = asyncio.ensure_future(self._inject(fault, point, target, record))
            self._busy.add(injecting)
            injecting.add_done_callback(self._busy.discard)
            await to_the_end(injecting)

    async def _inject(self, fault: Fault, point: str, target: FaultTarget, record: StepRecord) -> None:
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
        self._open.remove(opened)  # (no await between the check and this: nothing heals twice)
        await to_the_end(self._healed(opened))

    @staticmethod
    async def _healed(opened: _Open) -> None:
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
        """Heal everything still open and release the small disks, whatever happened (best
        effort, each on its own), all of it also when the scenario is being cancelled."""
        await to_the_end(self._close())

    async def _close(self) -> None:
        if self._busy:  # first: an injection that ends now may still start a timer
            await asyncio.wait(list(self._busy))
        for timer in self._timers:
            timer.cancel()  # one already healing finishes its heal first (to_the_end)
        if self._timers:
            await asyncio.wait(self._timers)
        for opened in list(self._open):
            with contextlib.suppress(Exception):
                await self._heal(opened)
        for home in self._homes:  # after the heals: the filler goes before its file system
            with contextlib.suppress(Exception):
                await asyncio.to_thread(release_small_disk, home)
