"""Scenario times kept from earlier runs, and the order the scheduler starts scenarios in."""

from __future__ import annotations

from handoff.coordinator.scheduler import expected_cost
from handoff.runs import costs
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, StepRecord, this_machine
from handoff.protocol import Backend
from handoff.scenario import Scenario, Step

STEP = Step("A", ("create", "tell", "close"))


def a_scenario(name: str, *steps: Step) -> Scenario:
    return Scenario(name, "T", "P", "D", steps or (STEP,))


def a_record(*scenarios: ScenarioRecord) -> RunRecord:
    options = RunOptions(fact="f", topic="t", jobs=2, backend=Backend())
    return RunRecord("20261204T000000Z-abc", "run", 0.0, 1.0, this_machine(None), options, list(scenarios))


def ran(name: str, seconds: float, **outcome) -> ScenarioRecord:
    return ScenarioRecord(name, a_scenario(name), steps=[StepRecord("A", "local", "shared", "home", "id")],
                          seconds=seconds, **outcome)


def test_times_are_kept_per_scenario_and_a_later_run_overrides_only_what_it_measured(tmp_path):
    costs.update(tmp_path, a_record(ran("slow", 7.5), ran("quick", 1.25)))
    costs.update(tmp_path, a_record(ran("quick", 2.0), ran("broken", 9.0, crashed="boom"),
                                    ScenarioRecord("absent", a_scenario("absent"), skipped="no podman")))
    assert costs.load(tmp_path) == {"slow": 7.5, "quick": 2.0}


def test_an_unreadable_or_odd_file_is_no_hint_at_all(tmp_path):
    assert costs.load(tmp_path) == {}
    (tmp_path / costs.COSTS).write_text("{not json")
    assert costs.load(tmp_path) == {}
    (tmp_path / costs.COSTS).write_text('["a list"]')
    assert costs.load(tmp_path) == {}
    (tmp_path / costs.COSTS).write_text('{"ok": 3, "negative": -1, "text": "x"}')
    assert costs.load(tmp_path) == {"ok": 3.0}
    huge = "1" + "0" * 400
    (tmp_path / costs.COSTS).write_text(f'{{"ok": 2.5, "huge": {huge}, "nan": NaN, "inf": 1e999, "yes": true}}')
    assert costs.load(tmp_path) == {"ok": 2.5}  # 10**400 made float() overflow
    (tmp_path / costs.COSTS).write_text("[" * 100_000 + "]" * 100_000)
    assert costs.load(tmp_path) == {}  # nested past the parser
    with open(tmp_path / costs.COSTS, "wb") as hint:
        hint.truncate(8 << 30)  # sparse: never read whole
    assert costs.load(tmp_path) == {}


def test_a_measured_time_outranks_the_guess_from_the_steps():
    long_by_steps = a_scenario("many-steps", STEP, STEP, STEP, STEP)
    short_by_steps = a_scenario("one-step")
    assert expected_cost(long_by_steps) > expected_cost(short_by_steps)
    measured = {"one-step": 30.0}
    assert expected_cost(short_by_steps, measured) == 30.0 > expected_cost(long_by_steps, measured)


def test_a_long_history_is_guessed_longer_than_many_steps():
    filled = a_scenario("long-history", Step("A", ("create", "tell", "fill", "close"), filler_turns=199))
    assert expected_cost(filled) > expected_cost(a_scenario("many-steps", STEP, STEP, STEP, STEP, STEP, STEP))


def test_with_one_slot_the_scenarios_start_in_the_order_of_their_measured_times(tmp_path):
    import asyncio
    from pathlib import Path

    from handoff.coordinator.scheduler import run_all
    from handoff.coordinator.services import RunServices, RunSettings
    from handoff.words import HostKind

    from tests.unit.fakes import FakeHost, FakeTracker, finished, ready

    started: list[str] = []

    def worker(spec):
        started.append(spec.scenario)
        yield ready(spec)
        yield finished()

    settings = RunSettings(jobs=1, measured_seconds={"b": 3.0, "c": 9.0, "a": 1.0})
    runs = RunServices(settings, Path("/no/runtime"), tmp_path, FakeTracker())
    host = FakeHost(HostKind.LOCAL, worker, runs.tracker)

    def place(_scenario, _services, _workdir, hosts):
        hosts[HostKind.LOCAL] = host

    records = asyncio.run(run_all([a_scenario(name) for name in "abc"], runs, place))
    assert started == ["c", "b", "a"]
    assert [r.name for r in records] == ["a", "b", "c"]
