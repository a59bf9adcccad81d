"""The scheduler: which scenario runs when, at most ``jobs`` at a time.

Scenarios are independent, so they run side by side. They are started longest first, so
that no long scenario starts last and runs alone; "longest" is what the scenario took when
it last ran (handoff/runs/costs.py), or a guess from its steps when it has not run yet.
Their records still come back in the order they were given. The run's observer is told as
each one starts and ends (the coordinator itself never prints). A scenario never raises
here (its failures are its record's ``crashed``), so one cannot cancel another; an
interrupt cancels them all, and the run waits for each to clean up after itself.
"""

from __future__ import annotations

import asyncio

from handoff.coordinator.placement import open_hosts
from handoff.coordinator.scenario_run import Placement, ScenarioRun
from handoff.coordinator.services import RunServices
from handoff.coordinator.slots import Slots
from handoff.runs.record import ScenarioRecord
from handoff.scenario import Scenario
from handoff.words import Action, HostKind

# A filler turn (the long-history rung's 199 took 12.9 s): without it a first run guessed
# that 200-turn scenario at two seconds and started it last, to run alone at the end.
FILLER_TURN_SECONDS = 0.065


def expected_cost(scenario: Scenario, measured: dict[str, float] | None = None) -> float:
    """Its length in seconds, for scheduling only: as measured in an earlier run, else about
    a second per step (a worker and its runtime), more on a simulated host, plus its
    filler turns and the turn time-out of a step that expects its answer never to arrive."""
    if measured and scenario.name in measured:
        return measured[scenario.name]
    return sum(1.0 + (0.5 if step.host != HostKind.LOCAL else 0.0)
               + step.actions.count(Action.FILL) * step.filler_turns * FILLER_TURN_SECONDS
               + (scenario.turn_timeout if step.waits_out_a_turn else 0.0) for step in scenario.steps)


async def run_all(scenarios: list[Scenario], services: RunServices, place: Placement = open_hosts) -> list[ScenarioRecord]:
    slots = Slots(services.settings.jobs)
    observer = services.settings.observer

    async def bounded(scenario: Scenario) -> ScenarioRecord:
        await services.ready_for(scenario)  # outside a slot: the others run meanwhile
        await slots.take()
        observer.scenario_started(scenario)
        try:
            record = await ScenarioRun(scenario, services, slots, place).run()
        finally:
            await slots.give_back()
        observer.scenario_finished(record)
        return record

    measured = services.settings.measured_seconds
    longest_first = sorted(range(len(scenarios)), key=lambda i: expected_cost(scenarios[i], measured), reverse=True)
    tasks = {i: asyncio.create_task(bounded(scenarios[i])) for i in longest_first}
    try:
        await asyncio.gather(*tasks.values())
    finally:
        await _all_ended(list(tasks.values()))
    return [tasks[i].result() for i in range(len(scenarios))]


async def _all_ended(tasks: list[asyncio.Task]) -> None:
    """Stop the scenarios still running and wait until every one has ended, its cleanup
    included. An interrupt cancels each scenario once (the gather passes it on), and the
    gather ends as soon as the first of them has ended: the others are still cleaning up
    (a nemesis healing its faults and unmounting its small disk). A second cancel would
    cut that cleanup short, and returning without them would leave them to the loop's
    end, which cancels them again; either left a mount behind."""
    for task in tasks:
        if not task.done() and not task.cancelling():
            task.cancel()
    interrupted: asyncio.CancelledError | None = None
    while not all(task.done() for task in tasks):
        try:
            await asyncio.wait([task for task in tasks if not task.done()])
        except asyncio.CancelledError as error:
            interrupted = interrupted or error
    if interrupted is not None:
        raise interrupted
