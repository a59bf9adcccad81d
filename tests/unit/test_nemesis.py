"""The nemesis: every injection and heal recorded with its time; faults healed when their
step ends, after their delay, or — whatever happened — when the scenario ends; a heal
that fails is recorded, and the others still heal; an interrupt (a cancellation) never
cuts an injection or a heal in half."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from handoff.coordinator.nemesis import Nemesis
from handoff.faults.base import Fault
from handoff.runs.record import StepRecord


@dataclass(eq=False)
class Recorded(Fault):
    at: str = "before-step"
    turn: int = 1
    heal_after: float | None = None
    kind: str = "fake"
    fails: bool = False
    done: list = field(default_factory=list)

    async def inject(self, target) -> str:
        self.done.append("inject")
        return "injected"

    async def heal(self, target) -> str:
        self.done.append("heal")
        if self.fails:
            raise OSError("the server would not start")
        return "healed"


def record() -> StepRecord:
    return StepRecord("A", "local", "shared", "home", "sid")


def test_a_fault_is_injected_only_at_its_point_and_turn_and_healed_when_its_step_ends():
    async def scenario():
        nemesis, step = Nemesis(), record()
        mine, later = Recorded(at="after-turn", turn=2), Recorded(at="before-step")
        await nemesis.inject((mine, later), "after-turn", 1, None, step)
        assert mine.done == [] and later.done == []
        await nemesis.inject((mine, later), "after-turn", 2, None, step)
        [injected] = step.faults
        assert (injected.kind, injected.point, injected.healed_at, injected.detail) == ("fake", "after-turn", None,
                                                                                       "injected")
        await nemesis.step_ended(step)
        [healed] = step.faults
        assert healed.healed_at >= healed.injected_at and healed.detail == "injected; healed"
        assert mine.done == ["inject", "heal"]

    asyncio.run(scenario())


def test_a_fault_with_a_delay_heals_by_itself_and_not_twice():
    async def scenario():
        nemesis, step = Nemesis(), record()
        fault = Recorded(heal_after=0.01)
        await nemesis.inject((fault,), "before-step", None, None, step)
        await asyncio.sleep(0.2)
        await nemesis.step_ended(step)  # it healed already: nothing more to do
        await nemesis.close()
        assert fault.done == ["inject", "heal"] and step.faults[0].healed_at is not None

    asyncio.run(scenario())


def test_whatever_is_open_heals_at_the_end_and_a_failed_heal_is_recorded_not_raised():
    async def scenario():
        nemesis, step = Nemesis(), record()
        failing, other = Recorded(fails=True, heal_after=600), Recorded(heal_after=600)
        await nemesis.inject((failing, other), "before-step", None, None, step)
        await nemesis.close()
        first, second = step.faults
        assert first.healed_at is None and first.detail == "injected; the heal failed: the server would not start"
        assert second.healed_at is not None and other.done == ["inject", "heal"]

    asyncio.run(scenario())


@dataclass(eq=False)
class Slow(Recorded):
    """Injects and heals across an ``await``, where a cancellation can land (a real fault
    mounts, stops a server or edits a firewall in a thread)."""

    takes: float = 0.1

    async def inject(self, target) -> str:
        await asyncio.sleep(self.takes)
        return await super().inject(target)

    async def heal(self, target) -> str:
        await asyncio.sleep(self.takes)
        return await super().heal(target)


def test_a_fault_being_injected_when_its_task_is_cancelled_is_injected_recorded_and_healed_at_close():
    """As the step driver cancels a mid-turn injection's task, and does not wait for it:
    the injection ends, is recorded, and close heals it (a Ctrl-C while a disk-full fault
    mounted its disk once left the mount behind: nothing knew it was there)."""
    async def scenario():
        nemesis, step = Nemesis(), record()
        fault = Slow()
        injecting = asyncio.create_task(nemesis.inject((fault,), "before-step", None, None, step))
        await asyncio.sleep(0.02)
        injecting.cancel()
        await nemesis.close()
        assert fault.done == ["inject", "heal"] and step.faults[0].healed_at is not None
        with pytest.raises(asyncio.CancelledError):  # the cancellation still went on, once it was done
            await injecting

    asyncio.run(scenario())


def test_close_heals_everything_even_when_cancelled_again_and_again_meanwhile():
    async def scenario():
        nemesis, step = Nemesis(), record()
        faults = (Slow(heal_after=600), Slow())
        await nemesis.inject(faults, "before-step", None, None, step)
        closing = asyncio.create_task(nemesis.close())
        for _ in range(3):  # an interrupt, then the scheduler and the loop's end cancelling again
            await asyncio.sleep(0.03)
            closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        assert [fault.done for fault in faults] == [["inject", "heal"]] * 2
        assert all(fault.healed_at is not None for fault in step.faults)

    asyncio.run(scenario())


def test_a_heal_under_way_when_close_cancels_its_timer_ends_before_close_returns():
    async def scenario():
        nemesis, step = Nemesis(), record()
        fault = Slow(heal_after=0.01, takes=0.2)
        await nemesis.inject((fault,), "before-step", None, None, step)
        await asyncio.sleep(0.05)  # the timer is inside its 0.2 s heal now
        await nemesis.close()
        assert fault.done == ["inject", "heal"] and step.faults[0].healed_at is not None

    asyncio.run(scenario())
