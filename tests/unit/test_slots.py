"""Slots: at most N scenarios at once, and one that stepped out gets back in first."""

from __future__ import annotations

import asyncio

from handoff.coordinator.slots import Slots


def test_a_returning_scenario_goes_before_those_not_yet_started():
    async def scenario() -> list[str]:
        slots, order = Slots(1), []
        await slots.take()  # "waiter" runs, then steps out for its wait
        await slots.give_back()
        await slots.take()  # "busy" takes the freed slot

        async def new(name: str) -> None:
            await slots.take()
            order.append(name)
            await slots.give_back()

        async def returning() -> None:
            await slots.take(returning=True)
            order.append("returning")
            await slots.give_back()

        queued = [asyncio.create_task(new(f"new-{i}")) for i in range(3)]
        await asyncio.sleep(0)  # the new ones queue first
        back = asyncio.create_task(returning())
        await asyncio.sleep(0)
        await slots.give_back()  # "busy" ends
        await asyncio.gather(*queued, back)
        return order

    assert asyncio.run(scenario()) == ["returning", "new-0", "new-1", "new-2"]


def test_never_more_than_the_count_at_once():
    async def scenario() -> int:
        slots, running, most = Slots(2), 0, 0

        async def one() -> None:
            nonlocal running, most
            await slots.take()
            running += 1
            most = max(most, running)
            await asyncio.sleep(0.001)
            running -= 1
            await slots.give_back()

        await asyncio.gather(*(one() for _ in range(10)))
        return most

    assert asyncio.run(scenario()) == 2
