"""Progress while a run goes on: the coordinator tells its observer as each scenario
starts and ends (driven here by fake workers), and the progress display turns that into
one line per finished scenario off a terminal, or a live view on one."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

from handoff.coordinator.scheduler import run_all
from handoff.coordinator.services import RunServices, RunSettings
from handoff.fact import Fact
from handoff.protocol import Backend
from handoff.report.progress import Progress
from handoff.scenario import Scenario, Step
from handoff.words import HostKind

from tests.unit.fakes import FakeHost, FakeTracker, answered, finished, ready
from tests.unit.test_coordinator import A, a_worker, by_step

FORGETFUL = Step("B", ("resume", "ask", "close"), expect="kept")


def b_forgets(spec):
    yield ready(spec)
    yield answered(spec, 1, "ask", "I don't know")
    yield finished()


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        self.now += 0.5
        return self.now


def run_observed(tmp_path: Path, observer, scenarios: list[Scenario]):
    services = RunServices(RunSettings(fact=Fact(), jobs=1, observer=observer), Path("/no/runtime"), tmp_path,
                           FakeTracker())
    host = FakeHost(HostKind.LOCAL, by_step(A=a_worker, B=b_forgets), services.tracker)

    def place(_scenario, _services, _workdir, hosts):
        hosts[HostKind.LOCAL] = host

    return asyncio.run(run_all(scenarios, services, place))


class Calls:
    def __init__(self):
        self.calls = []

    def scenario_started(self, scenario):
        self.calls.append(("started", scenario.name))

    def scenario_finished(self, record):
        self.calls.append(("finished", record.name, len(record.steps)))


def test_the_observer_is_told_when_each_scenario_starts_and_ends(tmp_path):
    calls = Calls()
    chosen = [Scenario(name, "T", "P", "D", (A, FORGETFUL)) for name in ("first", "second")]
    run_observed(tmp_path, calls, chosen)
    assert sorted(calls.calls) == sorted([("started", "first"), ("finished", "first", 2), ("started", "second"),
                                          ("finished", "second", 2)])
    for name in ("first", "second"):  # one slot: each ends before the next starts
        assert calls.calls.index(("started", name)) + 1 == calls.calls.index(("finished", name, 2))


def test_off_a_terminal_progress_is_one_plain_line_per_finished_scenario(tmp_path):
    chosen = [Scenario(name, "T", "P", "D", (A, FORGETFUL)) for name in ("first", "second")]
    stream = io.StringIO()
    with Progress(chosen, Fact(), Backend(), stream=stream, clock=Clock()) as progress:
        run_observed(tmp_path, progress, chosen)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    # The fake workers leave no witness record, so the checker cannot judge the question.
    assert lines[0].startswith("[1/2 ") and lines[0].endswith("] first: unknown, could not be judged (0.0 s)")
    assert lines[1].startswith("[2/2 ") and "] second: unknown, could not be judged" in lines[1]
    assert "\x1b" not in stream.getvalue()  # no escape codes in a log file


def test_on_a_terminal_the_live_view_shows_running_done_and_waiting():
    chosen = [Scenario(name, "T", "P", "D", (A, FORGETFUL)) for name in ("first", "second", "third")]
    progress = Progress(chosen, Fact(), Backend(), stream=io.StringIO(), clock=Clock())
    progress.scenario_started(chosen[0])
    screen = Console(file=io.StringIO(), width=100, color_system=None)
    screen.print(progress._view())
    text = screen.file.getvalue()
    assert "running  first" in text and "0 of 3 done, 1 running, 2 waiting" in text


def test_the_plan_is_said_when_the_run_starts_and_progress_follows_it(tmp_path):
    said = []
    chosen = [Scenario("first", "T", "P", "D", (A, FORGETFUL))]
    stream = io.StringIO()
    with Progress(chosen, Fact(), Backend(), stream=stream, clock=Clock(), on_start=lambda: said.append("plan")) as p:
        assert said == []  # nothing before the run's checks passed
        p.run_started()
        assert said == ["plan"]
        run_observed(tmp_path, p, chosen)
    assert stream.getvalue().startswith("[1/1 ")
