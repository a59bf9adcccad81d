"""The coordinator's scenario run and step driver, driven by fake workers (tests/unit/fakes.py):
the session id passed along, time-outs, fault points, crashes kept in their scenario."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from handoff import versions
from handoff.checker.checks import judge_scenario
from handoff.coordinator.scenario_run import ScenarioRun
from handoff.coordinator.scheduler import run_all
from handoff.coordinator.services import RunServices, RunSettings
from handoff.coordinator.slots import Slots
from handoff.eventlog import events_path
from handoff.fact import Fact
from handoff.hosts.base import Launch
from handoff.protocol import ActionDone, Holding
from handoff.runtime_locator import platform_package
from handoff.scenario import FaultPlan, Scenario, Step
from handoff.words import FaultPoint, HostKind, Verdict

from tests.unit.fakes import HANG, FakeHost, FakeTracker, answered, finished, ready

FACT = Fact()
RECALLED = "Your favourite retail segment is 'At Risk'."


def a_worker(spec):
    """Creates, tells and closes; the runtime picks the id when asked to."""
    chosen = spec.session_id if "create" in spec.actions else "runtime-chosen-id"
    yield ready(spec)
    yield ActionDone(t=0.0, action="create", session_id=chosen, ms=1)
    yield answered(spec, 1, "tell", "OK", chosen)
    yield finished()


def b_worker(spec):
    yield ready(spec)
    yield answered(spec, 1, "ask", RECALLED)
    yield finished()


def by_step(**scripts):
    def script(spec):
        return scripts[spec.step](spec)
    return script


def services(tmp_path: Path, timeout: float = 5.0) -> RunServices:
    return RunServices(RunSettings(fact=FACT, step_timeout=timeout), Path("/no/runtime"), tmp_path, FakeTracker())


def run(scenario: Scenario, tmp_path: Path, script, timeout: float = 5.0, fail_to_start: str | None = None):
    runs = services(tmp_path, timeout)
    host = FakeHost(HostKind.LOCAL, script, runs.tracker, fail_to_start)

    def place(_scenario, _services, _workdir, hosts):
        hosts[HostKind.LOCAL] = host

    record = asyncio.run(ScenarioRun(scenario, runs, Slots(1), place).run())
    return record, host


def scenario(*steps: Step, **fields) -> Scenario:
    return Scenario("s", "T", "P", "D", steps, **fields)


A = Step("A", ("create", "tell", "close"))
B = Step("B", ("resume", "ask", "close"), expect="kept")


def test_the_id_a_step_ended_with_is_passed_to_the_next(tmp_path):
    record, host = run(scenario(Step("A", ("create-without-id", "tell", "close")), B), tmp_path,
                       by_step(A=a_worker, B=b_worker))
    given_to_a, given_to_b = (spec.session_id for spec in host.specs)
    assert given_to_a.startswith("handoff-") and given_to_b == "runtime-chosen-id"
    assert [step.session_id for step in record.steps] == [given_to_a, "runtime-chosen-id"]


def test_a_step_asking_for_an_unknown_id_gets_a_fresh_one_and_does_not_pass_it_on(tmp_path):
    unknown = Step("U", ("resume", "ask", "close"), session="unknown", expect="lost")
    _, host = run(scenario(A, unknown, B, session_id="fixed-id"), tmp_path, by_step(A=a_worker, U=b_worker, B=b_worker))
    a, u, b = (spec.session_id for spec in host.specs)
    assert a == b == "fixed-id" and u not in ("fixed-id", None)


def test_each_worker_is_told_its_step_and_the_fact(tmp_path):
    _, host = run(scenario(A, B), tmp_path, by_step(A=a_worker, B=b_worker))
    spec = host.specs[1]
    assert (spec.step, spec.actions, spec.fact_value, spec.fact_topic) == ("B", B.actions, FACT.value, FACT.topic)
    assert spec.tags["x-handoff-step"] == "B"


def test_a_worker_that_never_ends_is_timed_out_killed_and_unknown(tmp_path):
    def silent(spec):
        yield ready(spec)
        yield HANG

    record, host = run(scenario(A, B), tmp_path, by_step(A=a_worker, B=silent), timeout=0.05)
    b = record.steps[1]
    assert b.timed_out and b.exit_code == -9
    [asked] = [t for t in judge_scenario(record, FACT).turns if t.kind == "ask"]
    assert (asked.verdict, asked.reason, asked.as_expected) == (Verdict.UNKNOWN, "worker timed out before answering",
                                                                None)


def test_a_holding_worker_is_killed_at_the_fault_point_and_the_kill_recorded(tmp_path):
    def holds(spec):
        yield from list(a_worker(spec))[:-1]
        yield Holding(t=0.0, session_id=spec.session_id, point=FaultPoint.AFTER_TURN)
        yield HANG

    crashing = Step("A", ("create", "tell"), faults=(FaultPlan("kill", "after-turn"),))
    record, host = run(scenario(crashing, B), tmp_path, by_step(A=holds, B=b_worker))
    a = record.steps[0]
    assert [(f.kind, f.point) for f in a.faults] == [("kill", "after-turn")]
    assert a.exit_code == -9 and host.tracker.killed[0] == host.workers[0].pid
    assert a.view().finished is None and record.steps[1].view().turns  # B still ran


def test_tamper_edits_the_stated_fact_before_the_step_starts(tmp_path):
    def writes_a_log(spec):
        log = events_path(Path(spec.home), spec.session_id)
        log.parent.mkdir(parents=True)
        told = {"type": "user.message", "data": {"content": f"Remember this: {FACT.stated_text}. Reply with just OK."}}
        log.write_text(json.dumps({"type": "session.start"}) + "\n" + json.dumps(told) + "\n", encoding="utf-8")
        yield from a_worker(spec)

    record, _ = run(scenario(A, Step("B", ("resume", "ask", "close"), faults=(FaultPlan("tamper", "before-step"),), expect="lost")), tmp_path,
                    by_step(A=writes_a_log, B=b_worker))
    [fault] = record.steps[1].faults
    assert (fault.kind, fault.point, fault.detail) == ("tamper", "before-step", "1 event(s) now state 'Tampered Value'")
    log = (tmp_path / "s" / "home-shared" / "session-state" / record.steps[0].session_id / "events.jsonl")
    assert "Tampered Value" in log.read_text() and FACT.value not in log.read_text()


def test_a_fault_that_changes_nothing_crashes_the_scenario_loudly(tmp_path):
    record, host = run(scenario(A, Step("B", ("resume", "ask", "close"), faults=(FaultPlan("tamper", "before-step"),), expect="lost")), tmp_path,
                       by_step(A=a_worker, B=b_worker))  # A wrote no log: nothing to tamper with
    assert "tamper: there is no event log" in record.crashed
    assert len(host.workers) == 1  # B never started
    turns = judge_scenario(record, FACT).turns
    assert turns[-1].verdict == Verdict.CRASHED and turns[-1].as_expected is None


def test_a_host_that_does_not_come_up_is_this_scenarios_crash(tmp_path):
    record, host = run(scenario(A, B), tmp_path, a_worker, fail_to_start="namespace could not be made")
    assert record.crashed == "RuntimeError: namespace could not be made"
    assert host.closed
    assert (tmp_path / "s" / "crash.txt").read_text().startswith("Traceback")


def test_a_line_that_is_not_an_event_is_kept_and_makes_the_turn_unknown(tmp_path):
    def babbles(spec):
        yield ready(spec)
        yield "this is not an event"

    record, _ = run(scenario(A, B), tmp_path, by_step(A=a_worker, B=babbles))
    assert record.steps[1].lines[-1] == "this is not an event"
    [asked] = [t for t in judge_scenario(record, FACT).turns if t.kind == "ask"]
    assert asked.verdict == Verdict.UNKNOWN and "broke the protocol: line 2" in asked.reason


def test_one_scenarios_crash_leaves_the_others_running(tmp_path):
    runs = services(tmp_path)
    good = FakeHost(HostKind.LOCAL, by_step(A=a_worker, B=b_worker), runs.tracker)

    def place(chosen, _services, _workdir, hosts):
        if chosen.name == "broken":
            raise RuntimeError("no namespace for you")
        hosts[HostKind.LOCAL] = good

    chosen = [Scenario(name, "T", "P", "D", (A, B)) for name in ("first", "broken", "last")]
    records = asyncio.run(run_all(chosen, runs, place))
    assert [r.name for r in records] == ["first", "broken", "last"]
    assert [r.crashed for r in records] == [None, "RuntimeError: no namespace for you", None]
    assert [len(r.steps) for r in records] == [2, 0, 2]


def test_hosts_are_made_off_the_event_loop_and_a_cancel_meanwhile_still_closes_them(tmp_path):
    """A scenario's hosts are made in a thread (their `ip` calls would hold up every other
    scenario's events), and a Ctrl-C that comes while the thread runs waits for it, so
    that the host it makes is closed with the scenario, not left on the machine."""
    runs = services(tmp_path)
    entered, loop_ran = threading.Event(), threading.Event()
    closed: list[str] = []

    class Recorded(FakeHost):
        async def close(self) -> None:
            closed.append(self.name)

    def place(_chosen, _services, _workdir, hosts):
        entered.set()
        if not loop_ran.wait(10):  # set by a coroutine: never, if this blocked the event loop
            raise AssertionError("the hosts were made on the event loop's thread")
        hosts[HostKind.LOCAL] = Recorded(HostKind.LOCAL, by_step(A=a_worker), runs.tracker)

    async def interrupted() -> None:
        running = asyncio.create_task(run_all([Scenario("s", "T", "P", "D", (A,))], runs, place))
        await asyncio.to_thread(entered.wait, 10)
        running.cancel()  # before the thread has made the host
        for _ in range(200):  # the cleanup a cancel starts, given every chance to finish too early
            if running.done():
                break
            await asyncio.sleep(0)
        loop_ran.set()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(interrupted())
    assert closed == [HostKind.LOCAL]


def test_an_interrupt_waits_for_every_scenario_to_clean_up_and_cancels_none_twice(tmp_path):
    """Ctrl-C cancels every scenario once, and the first to end its cleanup ended the
    gather: the scheduler then cancelled the others again, in the middle of theirs (a
    nemesis unmounting a small disk was cut short so), and returned without them."""
    runs = RunServices(RunSettings(fact=FACT, step_timeout=5.0, jobs=2), Path("/no/runtime"), tmp_path, FakeTracker())
    cleaned: list[str] = []

    class SlowToClose(FakeHost):
        async def close(self) -> None:
            await asyncio.sleep(0.2)  # a cleanup that awaits, as healing faults does
            cleaned.append("slow")

    def hangs(spec):
        yield ready(spec)
        yield HANG

    def place(chosen, _services, _workdir, hosts):
        hosts[HostKind.LOCAL] = (SlowToClose if chosen.name == "slow" else FakeHost)(HostKind.LOCAL, hangs, runs.tracker)

    async def interrupted() -> None:
        chosen = [Scenario(name, "T", "P", "D", (A,)) for name in ("slow", "quick")]
        running = asyncio.create_task(run_all(chosen, runs, place))
        while len(runs.tracker.workers) < 2:  # both scenarios mid-step
            await asyncio.sleep(0.01)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(interrupted())
    assert cleaned == ["slow"]


def test_the_lease_clock_stands_still_until_a_step_asks_for_the_lease_to_run_out(tmp_path):
    """The holder takes a lease at the coordinator's clock; the next step gets the same
    time however long it took to start (here: a real half second more than the lease
    would last on the wall clock); the step after lease-expired gets a time past its end."""
    import time

    from handoff.guard import gate
    from handoff.stores.registry import Registry
    from handoff.stores.database import connect

    clocks = {}

    def holder(spec):
        clocks[spec.step] = spec.lease_clock
        database = connect(spec.registry)
        Registry(database).take_lease(spec.session_id, "holder:1", gate.LEASE_SECONDS, now=spec.lease_clock)
        database.close()
        yield from a_worker(spec)

    def slow(spec):
        time.sleep(0.5)
        clocks[spec.step] = spec.lease_clock
        yield from b_worker(spec)

    def later(spec):
        clocks[spec.step] = spec.lease_clock
        yield from b_worker(spec)

    steps = (Step("A", ("create", "tell", "close"), guarded=True),
             Step("too-soon", ("resume", "ask", "close"), guarded=True, expect="kept"),
             Step("later", ("resume", "ask", "close"), guarded=True, expect="kept", after="lease-expired"))
    record, _ = run(scenario(*steps), tmp_path, by_step(A=holder, **{"too-soon": slow}, later=later))
    assert clocks["A"] == clocks["too-soon"] == 0.0
    assert clocks["later"] > gate.LEASE_SECONDS
    assert [s.lease_clock for s in record.steps] == [0.0, 0.0, clocks["later"]]
    assert record.steps[2].notes == [f"lease clock 0 s -> {clocks['later']:g} s: the coordinator saw the lease of "
                                     f"holder:1 end at {gate.LEASE_SECONDS:g} s before this step started"]


def test_a_raw_step_gets_no_lease_clock(tmp_path):
    record, _ = run(scenario(A, B), tmp_path, by_step(A=a_worker, B=b_worker))
    assert [s.lease_clock for s in record.steps] == [None, None]


def test_a_step_that_sits_out_a_turn_time_out_lends_its_slot_meanwhile(tmp_path):
    """One slot: the scenario whose step waits for an answer that never comes (it goes
    first, being the longest) lets the other run meanwhile, and gets its slot back to end."""
    runs = services(tmp_path, timeout=2.0)
    other_done = asyncio.Event()

    def waits_for_the_other(spec):
        yield ready(spec)
        yield other_done  # what waiting out the time-out looks like from here: nothing, for a while
        yield finished()

    def b_then_done(spec):
        yield from b_worker(spec)
        other_done.set()

    scripts = {"sits-out": by_step(A=a_worker, B=waits_for_the_other), "other": by_step(A=a_worker, B=b_then_done)}
    order = []

    def place(chosen, _services, _workdir, hosts):
        order.append(chosen.name)
        hosts[HostKind.LOCAL] = FakeHost(HostKind.LOCAL, scripts[chosen.name], runs.tracker)

    chosen = [Scenario("other", "T", "P", "D", (A, B)),
              Scenario("sits-out", "T", "P", "D", (A, Step("B", ("resume", "ask", "close"), expect="undelivered")),
                       turn_timeout=20)]
    records = asyncio.run(run_all(chosen, runs, place))
    assert order == ["sits-out", "other"]
    waited = records[1].steps[1]
    assert not waited.timed_out and waited.exit_code == 0  # it ended: the other scenario ran inside the wait
    assert [len(r.steps) for r in records] == [2, 2] and not any(r.crashed for r in records)


# Steps that name versions

@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Runtime 1.0.92 and SDK 1.0.24 pinned and installed, 1.0.40 pinned only."""
    root = tmp_path / "project"
    for name, folder in (("RUNTIMES_DIR", "runtimes"), ("SDKS_DIR", "sdks"), ("SDK_VENVS", "venvs"),
                         ("RUNTIME_CACHES", "caches")):
        monkeypatch.setattr(versions, name, root / folder)
    for version in ("1.0.92", "1.0.40"):
        (root / "runtimes" / version).mkdir(parents=True)
        (root / "runtimes" / version / "package-lock.json").write_text("{}")
    executable = root / "runtimes" / "1.0.92" / "node_modules" / "@github" / platform_package() / "copilot"
    executable.parent.mkdir(parents=True)
    executable.write_text("")
    (root / "sdks" / "1.0.24").mkdir(parents=True)
    (root / "sdks" / "1.0.24" / "requirements.txt").write_text("")
    (root / "venvs" / "1.0.24" / "bin").mkdir(parents=True)
    (root / "venvs" / "1.0.24" / "bin" / "python").write_text("")
    (root / "venvs" / "1.0.24" / ".installed").write_text("")
    return root


def test_a_step_s_versions_reach_its_spec_and_how_its_worker_is_started(tmp_path, installed):
    on_other_versions = Step("B", ("resume", "ask", "close"), expect="kept", runtime="1.0.92", sdk="1.0.24")
    record, host = run(scenario(A, on_other_versions, turn_timeout=20.0, known_good=(("1.0.102", "1.0.92"),)),
                       tmp_path / "run", by_step(A=a_worker, B=b_worker))
    default, other = host.specs
    assert (default.runtime_version, default.sdk_version, default.runtime_path) == (None, None, "/no/runtime")
    assert (other.runtime_version, other.sdk_version) == ("1.0.92", "1.0.24")
    assert other.runtime_path == str(installed / "runtimes" / "1.0.92" / "node_modules" / "@github" / platform_package() / "copilot")
    assert (other.turn_timeout, other.known_good) == (20.0, (("1.0.102", "1.0.92"),))
    first, second = host.launches
    assert first == Launch()  # the default pair: the host's own interpreter and cache
    assert second == Launch(python=installed / "venvs" / "1.0.24" / "bin" / "python",
                            runtime_cache=installed / "caches" / "1.0.92")


def test_a_container_step_s_home_and_restart_reach_how_its_worker_is_started(tmp_path):
    """One Launch carries both a container's home and restart and a step's versions: the
    container's part is not lost for a step that names no version."""
    record, host = run(scenario(Step("A", A.actions, home="anonymous"), Step("B", B.actions, expect="kept", restart=True)),
                       tmp_path / "run", by_step(A=a_worker, B=b_worker))
    assert host.launches == [Launch(anonymous_home=True), Launch(restart=True)]
    assert [step.home for step in record.steps] == ["anonymous", "restarted"]


def test_a_version_that_is_not_installed_skips_the_scenario_with_the_install_command(tmp_path, installed):
    record, host = run(scenario(A, Step("B", ("resume", "ask", "close"), expect="kept", runtime="1.0.40")),
                       tmp_path / "run", by_step(A=a_worker, B=b_worker))
    assert record.skipped == "step 'B': runtime 1.0.40 is not installed: run `make runtimes`"
    assert host.specs == []
    assert judge_scenario(record, FACT).turns[0].verdict == Verdict.SKIPPED


@pytest.mark.parametrize("point", [FaultPoint.AFTER_TURN, FaultPoint.INSIDE_WRITE, FaultPoint.INSIDE_TOOL,
                                   FaultPoint.HOLD])
def test_a_worker_is_told_to_hold_at_each_of_its_fault_points(tmp_path, point):
    """The worker stops and says `holding` at after-turn, inside-write, inside-tool and
    hold, where the coordinator then puts the fault in (a mid-turn fault is held by the
    witness instead)."""
    def finishes(spec):
        yield ready(spec)
        yield finished()

    faulty = Step("A", ("create", "tell", "hold"), faults=(FaultPlan("kill", point),))
    _, host = run(scenario(faulty), tmp_path, by_step(A=finishes))
    assert [(hold.point, hold.turn) for hold in host.specs[0].holds] == [(point, 1)]
