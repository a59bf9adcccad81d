"""The nemesis: every injection and heal recorded with its time; faults healed when their
step ends, after their delay, or — whatever happened — when the scenario ends; a heal
that fails is recorded, and the others still heal."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from handoff.coordinator.nemesis import Nemesis
from handoff.faults import Fault
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
