"""How many scenarios run at once, with the way back in for a scenario that stepped out.

A scenario that waits (a step's ``wait``, say for a lease to expire) costs no CPU, so it
gives its slot to another scenario meanwhile. With a plain FIFO semaphore it would then
queue behind every scenario not yet started and finish near the end of the run, its
reported time swollen by the queue. Here a returning scenario takes the next free slot
before any new one.
"""

from __future__ import annotations

import asyncio


class Slots:
    def __init__(self, count: int):
        self._free = max(1, count)
        self._returning = 0  # scenarios waiting to get back in
        self._changed = asyncio.Condition()

    async def take(self, returning: bool = False) -> None:
        async with self._changed:
            self._returning += returning
            try:
                await self._changed.wait_for(lambda: self._free > 0 and (returning or self._returning == 0))
            finally:
                self._returning -= returning
            self._free -= 1

    async def give_back(self) -> None:
        async with self._changed:
            self._free += 1
            self._changed.notify_all()
