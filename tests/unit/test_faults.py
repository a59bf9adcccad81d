"""Each fault kind against a fake target: what it does to a log's bytes, to a server, to a
host's firewall, and that it says so — or refuses loudly when there is nothing to act on.
The real runtime's reactions are measured in tests/e2e/test_faults.py."""

from __future__ import annotations

import asyncio
import json

import pytest

from handoff.fact import Fact
from handoff.faults import machines
from handoff.faults.base import FaultDidNotApply, FaultTarget
from handoff.faults.catalogue import build
from handoff.faults.logs import CorruptLog, CutCopy, Tamper, TearLog
from handoff.faults.machines import DiskFull, Partition, StoreOutage
from handoff.faults.processes import Kill, KillRuntime
from handoff.scenario import FaultPlan

EVENTS = [{"type": "session.start", "data": {}},
          {"type": "user.message", "data": {"content": "Remember this: my favourite retail segment is 'At Risk'."}},
          {"type": "assistant.message", "data": {"content": "OK"}},
          {"type": "session.shutdown", "data": {}}]


def run(coroutine):
    return asyncio.run(coroutine)


def target(tmp_path, events=EVENTS, **fields) -> FaultTarget:
    log = tmp_path / "session-state" / "sid" / "events.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in events))
    return FaultTarget(tracker=None, home=tmp_path, session_id="sid", fact=Fact(), **fields)


def log_lines(tmp_path) -> list[bytes]:
    return (tmp_path / "session-state" / "sid" / "events.jsonl").read_bytes().split(b"\n")


def test_every_kind_is_built_from_its_plan():
    plans = [FaultPlan("kill", "mid-turn", 2, target="app"), FaultPlan("kill-runtime", "mid-turn"),
             FaultPlan("store-outage", "before-step", heal=3.0), FaultPlan("partition", "hold", target="model"),
             FaultPlan("disk-full", "after-turn"), FaultPlan("tear-log", "before-step", cut=5),
             FaultPlan("corrupt-log", "before-step", line=2), FaultPlan("cut-copy", "before-step", events=1),
             FaultPlan("tamper", "before-step")]
    built = [build(plan) for plan in plans]
    assert [type(f) for f in built] == [Kill, KillRuntime, StoreOutage, Partition, DiskFull, TearLog, CorruptLog,
                                        CutCopy, Tamper]
    assert (built[0].at, built[0].turn, built[0].target) == ("mid-turn", 2, "app")
    assert built[2].heal_after == 3.0 and built[3].target == "model"
    assert (built[5].cut, built[6].line, built[7].events) == (5, 2, 1)


def test_tear_log_cuts_half_the_last_line_by_default(tmp_path):
    said = run(TearLog().inject(target(tmp_path)))
    lines = log_lines(tmp_path)
    whole = json.dumps(EVENTS[-1]).encode()
    assert lines[:3] == [json.dumps(e).encode() for e in EVENTS[:3]]
    assert lines[3] == whole[: len(whole) - len(whole) // 2]  # half the line and its newline are gone
    assert "the last event is torn" in said


def test_tear_log_refuses_a_cut_longer_than_the_log(tmp_path):
    with pytest.raises(FaultDidNotApply, match="cannot cut"):
        run(TearLog(cut=10**6).inject(target(tmp_path)))


def test_corrupt_log_breaks_one_line_and_keeps_its_length(tmp_path):
    said = run(CorruptLog(line=2).inject(target(tmp_path)))
    lines = log_lines(tmp_path)
    original = json.dumps(EVENTS[1]).encode()
    assert lines[1].startswith(b"\0\0\0\0") and len(lines[1]) == len(original)
    assert [json.loads(line) for line in (lines[0], lines[2], lines[3])] == [EVENTS[0], EVENTS[2], EVENTS[3]]
    assert said == "line 2 of 4 (user.message) is no longer JSON"


def test_corrupt_log_refuses_a_line_that_is_not_there(tmp_path):
    with pytest.raises(FaultDidNotApply, match="no line 9"):
        run(CorruptLog(line=9).inject(target(tmp_path)))


@pytest.mark.parametrize("events, whole", [(1, 1), (None, 2), (0, 0)])
def test_cut_copy_keeps_whole_events_then_half_of_the_next(tmp_path, events, whole):
    said = run(CutCopy(events=events).inject(target(tmp_path)))
    data = (tmp_path / "session-state" / "sid" / "events.jsonl").read_bytes()
    lines = data.split(b"\n")
    assert [json.loads(line) for line in lines[:whole]] == EVENTS[:whole]
    torn = json.dumps(EVENTS[whole]).encode()
    assert lines[whole] == torn[: len(torn) // 2] and len(lines) == whole + 1
    assert said.endswith(f"{whole} of 4 events whole")


def test_cut_copy_of_every_event_is_no_cut(tmp_path):
    with pytest.raises(FaultDidNotApply, match="not cut short"):
        run(CutCopy(events=4).inject(target(tmp_path)))


def test_a_log_fault_without_a_log_refuses(tmp_path):
    empty = FaultTarget(tracker=None, home=tmp_path, session_id="nothing", fact=Fact())
    for fault in (TearLog(), CorruptLog(), CutCopy(), Tamper()):
        with pytest.raises(FaultDidNotApply, match="no event log"):
            run(fault.inject(empty))


def test_tamper_with_another_fact_edits_that_fact(tmp_path):
    other = Fact('Ünïcode "quoted" \\ value')
    events = [EVENTS[0], {"type": "user.message", "data": {"content": other.stated_text}}]
    fault_target = target(tmp_path, events)
    fault_target.fact = other
    assert run(Tamper().inject(fault_target)) == "1 event(s) now state 'Tampered Value'"
    assert "Tampered Value" in json.loads(log_lines(tmp_path)[1])["data"]["content"]


class FakeServer:
    def __init__(self):
        self.calls = []

    def shut_down(self):
        self.calls.append("shut down")

    def launch(self):
        self.calls.append("launch")

    def wait_ready(self):
        self.calls.append("ready")


def test_store_outage_stops_the_server_and_starts_it_again(tmp_path):
    server = FakeServer()
    fault_target = FaultTarget(tracker=None, home=tmp_path, session_id="sid", fact=Fact(), database=server)
    outage = StoreOutage("before-step")
    assert run(outage.inject(fault_target)) == "PostgreSQL shut down (fast)"
    assert run(outage.heal(fault_target)) == "PostgreSQL started again on the same data and port"
    assert server.calls == ["shut down", "launch", "ready"]


def test_store_outage_without_a_server_of_its_own_refuses(tmp_path):
    with pytest.raises(FaultDidNotApply, match="no throwaway PostgreSQL"):
        run(StoreOutage("before-step").inject(FaultTarget(None, tmp_path, "sid", Fact())))


class FakeHost:
    name = "b"
    lan_gateway = "10.1.2.1"
    netns = "handoff-000001-b"


@pytest.mark.parametrize("cut_off, rule", [
    ("database", ["-p", "tcp", "-d", "10.1.2.1", "--dport", "5432", "-j", "REJECT", "--reject-with", "tcp-reset"]),
    ("model", ["-p", "tcp", "-d", "10.1.2.1", "--dport", "8080", "-j", "REJECT", "--reject-with", "tcp-reset"]),
    ("everything", ["-d", "10.1.2.1", "-j", "REJECT"]),
])
def test_a_partition_adds_one_rule_in_the_hosts_namespace_and_heal_deletes_it(tmp_path, monkeypatch, cut_off, rule):
    ran = []

    class Done:
        returncode, stderr = 0, ""

    monkeypatch.setattr(machines.subprocess, "run", lambda command, **_: ran.append(command) or Done())
    fault_target = FaultTarget(None, tmp_path, "sid", Fact(), host=FakeHost(), ports={"database": 5432, "model": 8080})
    partition = Partition("before-step", target=cut_off)
    assert run(partition.inject(fault_target)) == f"host b cut off from {cut_off} (connections refused)"
    assert run(partition.heal(fault_target)) == f"host b reaches {cut_off} again"
    prefix = ["ip", "netns", "exec", "handoff-000001-b", "iptables"]
    assert ran == [[*prefix, "-I", "OUTPUT", *rule], [*prefix, "-D", "OUTPUT", *rule]]


def test_a_partition_of_a_host_without_a_network_of_its_own_refuses(tmp_path):
    class Local:
        name, lan_gateway = "local", "127.0.0.1"

    fault_target = FaultTarget(None, tmp_path, "sid", Fact(), host=Local(), ports={"database": 5432})
    with pytest.raises(FaultDidNotApply, match="not a simulated host"):
        run(Partition("before-step").inject(fault_target))


def test_a_partition_from_a_service_the_run_lacks_refuses(tmp_path):
    fault_target = FaultTarget(None, tmp_path, "sid", Fact(), host=FakeHost(), ports={})
    with pytest.raises(FaultDidNotApply, match="no database"):
        run(Partition("before-step").inject(fault_target))


def test_disk_full_heal_removes_the_filler_and_says_how_much(tmp_path):
    (tmp_path / machines.FILLER).write_bytes(b"\0" * 1000)
    said = run(DiskFull("after-turn").heal(FaultTarget(None, tmp_path, "sid", Fact())))
    assert said == "1000 bytes freed" and not (tmp_path / machines.FILLER).exists()


@pytest.mark.parametrize("fault", [Kill("after-turn"), KillRuntime("mid-turn")])
def test_a_kill_with_no_worker_refuses(tmp_path, fault):
    with pytest.raises(FaultDidNotApply):
        run(fault.inject(FaultTarget(None, tmp_path, "sid", Fact())))
