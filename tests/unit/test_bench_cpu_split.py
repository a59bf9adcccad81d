"""bench/matrix.py splits a run's CPU time by the workers' own reports."""

from __future__ import annotations

import msgspec
import pytest

from bench.matrix import cpu_split
from handoff.protocol import Backend, Cpu, Finished, Holding, Ready, encode
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
from handoff.scenario import Scenario, Step

READY = Ready(t=0.0, pid=1, hostname="h", address=None, home="/h", runtime_version="1", sdk_version="1",
              runtime_start_ms=1)


def _step(*events):
    return StepRecord("A", "local", "shared", "home", "x", lines=[encode(e).decode() for e in (READY, *events)])


def _record(*scenarios) -> dict:
    record = RunRecord("r", "run", 0.0, 1.0, Versions("0", "1", "1", "3", "L", "m", 2),
                       RunOptions("v", "t", 1, Backend()), list(scenarios))
    return {"record": msgspec.to_builtins(record), "judgement": {}}


def _scenario(*steps) -> ScenarioRecord:
    return ScenarioRecord("s", Scenario("s", "T", "P", "D", (Step("A", ("create",)),)), steps=list(steps))


def test_the_split_sums_what_the_workers_reported_and_leaves_the_rest(tmp_path):
    results = _record(
        _scenario(_step(Finished(t=1.0, ok=True, cpu_s=Cpu(worker=0.04, runtime=0.8))),
                  _step(Finished(t=1.0, ok=True, cpu_s=Cpu(worker=0.7, runtime=0.75)))),
        _scenario(_step(Holding(t=1.0, session_id="x", point="after-turn"))),  # killed on purpose: no report
    )
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(results))
    split = cpu_split(10.0, path)
    assert split.lifecycles == 2
    assert split.runtimes == pytest.approx(1.55) and split.workers == pytest.approx(0.74)
    assert split.rest == pytest.approx(10.0 - 1.55 - 0.74)


def test_a_killed_worker_s_cpu_noted_at_the_kill_counts_with_the_runtimes_and_workers(tmp_path):
    killed = _step(Holding(t=1.0, session_id="x", point="after-turn"))
    killed.killed_cpu_s = Cpu(worker=0.1, runtime=0.6)
    reported_then_killed = _step(Finished(t=1.0, ok=True, cpu_s=Cpu(worker=0.04, runtime=0.8)))
    reported_then_killed.killed_cpu_s = Cpu(worker=9.0, runtime=9.0)  # its own report wins: no double count
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(_record(_scenario(killed, reported_then_killed))))
    split = cpu_split(10.0, path)
    assert (split.lifecycles, split.killed) == (1, 1)
    assert split.runtimes == pytest.approx(1.4) and split.workers == pytest.approx(0.14)


def test_workers_started_as_new_interpreters_are_told_apart_from_forked_ones(tmp_path):
    reported = Finished(t=1.0, ok=True, cpu_s=Cpu(worker=1.0, runtime=0.5))
    steps = (Step("A", ("create",)), Step("B", ("resume",), host="box"), Step("C", ("resume",), sdk="1.0.24"),
             Step("D", ("resume",), host="ns"))
    chosen = Scenario("s", "T", "P", "D", steps, hosts={"box": "container", "ns": "namespace"})
    records = [StepRecord(step.name, step.host, "shared", "home", "x",
                          lines=[encode(e).decode() for e in (READY, reported)]) for step in steps]
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(_record(ScenarioRecord("s", chosen, steps=records))))
    split = cpu_split(10.0, path)
    assert (split.new_interpreter_count, split.new_interpreters, split.workers) == (2, 2.0, 4.0)


def test_no_split_without_a_readable_results_file(tmp_path):
    assert cpu_split(1.0, tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{")
    assert cpu_split(1.0, tmp_path / "bad.json") is None


def test_the_findings_say_what_1_10x_of_the_corrected_floor_leaves_the_tool():
    """Runtimes 100 and new interpreters 10 CPU-s on 2 cores: the corrected floor is 55 s
    and 1.10x of it leaves 11 CPU-s of the tool's own if no core idles. The tool used 20
    (130 in all, 65 s at best) and took 70 s: 10 core-s idle, so 1 CPU-s is left."""
    from bench.matrix import CpuSplit, _floor_findings
    from bench.report import Section

    section = Section("matrix", "Matrix")
    split = CpuSplit(total=130.0, runtimes=100.0, workers=16.0, lifecycles=100, new_interpreters=10.0,
                     new_interpreter_count=20)
    _floor_findings(section, [split], wall_s=70.0, parallel=2)
    last = section.findings[-1]
    assert "CPU / 2 = 65.0 s, 1.18× the corrected floor" in last
    assert "leaves the tool 11.0 CPU-s of its own" in last and "it used 20.0" in last
    assert "with the 10.0 core-s left idle here, 1.0 CPU-s." in last
