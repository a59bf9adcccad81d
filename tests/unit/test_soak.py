"""bench/soak.py's pure parts: the plan of runs, the comparison with the idle run (as
`handoff diff` compares), the table, the caches moved aside and put back, and its block
of BENCHMARKS.md, which `make bench` keeps when it rewrites the file."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import psutil

from bench import report
from bench.soak import (
    COLD,
    IDLE,
    MANIFEST,
    SATURATED,
    ColdCaches,
    Outcome,
    compare,
    differences_table,
    findings,
    others_using_caches,
    plan,
    restore_leftovers,
    runs_table,
)
from handoff.checker.verdicts import Expectation, RunJudgement, ScenarioJudgement, TurnJudgement
from handoff.hosts.base import USER_DIRS
from handoff.words import Verdict


def _scenario(name: str, verdict: Verdict, expected: Verdict = Verdict.KEPT) -> ScenarioJudgement:
    ask = TurnJudgement(name, "ask", 2, None, verdict=verdict,
                        expectations=(Expectation("verdict", expected.value, verdict.value, verdict == expected),))
    return ScenarioJudgement(name, name, "", "", 1.0, (TurnJudgement(name, "tell", 1, None), ask))


def _run(run_id: str, **verdicts: Verdict) -> RunJudgement:
    return RunJudgement(run_id, "At Risk", tuple(_scenario(name.replace("_", "-"), v) for name, v in verdicts.items()))


IDLE_RUN = _run("idle", same_process=Verdict.KEPT, no_id=Verdict.KEPT, tamper=Verdict.KEPT)


def test_the_plan_is_idle_then_saturated_then_cold_and_one_saturated_run_goes_above_the_cores():
    runs = plan(5, 2)
    assert [r.load for r in runs] == [IDLE] + [SATURATED] * 5 + [COLD]
    assert [r.jobs for r in runs] == [2, 4, 2, 4, 2, 4, 2]
    assert all(r.busy == 4 for r in runs if r.load == SATURATED) and not any(r.busy for r in runs if r.load != SATURATED)
    quick = plan(1, 3)
    assert [(r.load, r.jobs) for r in quick] == [(IDLE, 3), (SATURATED, 6), (COLD, 3)]


def test_identical_verdicts_compare_as_every_scenario_the_same():
    found = compare(IDLE_RUN, _run("loaded", same_process=Verdict.KEPT, no_id=Verdict.KEPT, tamper=Verdict.KEPT))
    assert found.identical and found.cell() == "3/3" and not found.differing


def test_a_scenario_whose_verdict_changed_is_named_with_the_idle_value_and_the_new_one():
    found = compare(IDLE_RUN, _run("loaded", same_process=Verdict.KEPT, no_id=Verdict.UNKNOWN, tamper=Verdict.KEPT))
    assert found.cell() == "2/3" and not found.identical
    assert list(found.differing) == ["no-id"]
    changed = {d.field: (d.before, d.after) for d in found.differing["no-id"]}
    assert changed["verdict"] == ("kept", "unknown")
    assert changed["match"] == ("yes", "NO")


def test_a_scenario_missing_from_either_run_differs_and_no_record_compares_nothing():
    found = compare(IDLE_RUN, _run("loaded", same_process=Verdict.KEPT, no_id=Verdict.KEPT, extra=Verdict.KEPT))
    assert found.cell() == "2/4" and set(found.differing) == {"tamper", "extra"}
    nothing = compare(IDLE_RUN, None)
    assert nothing.cell() == "0/3 (no record)" and not nothing.identical


def _outcomes() -> list[Outcome]:
    runs = plan(1, 2)
    idle = Outcome(runs[0], wall_s=80.0, exit_code=0, run_id="r-idle", jobs_ran=2, judgement=IDLE_RUN)
    loaded_run = _run("r-load", same_process=Verdict.KEPT, no_id=Verdict.LOST, tamper=Verdict.KEPT)
    loaded = Outcome(runs[1], wall_s=200.0, exit_code=1, run_id="r-load", jobs_ran=4, judgement=loaded_run,
                     comparison=compare(IDLE_RUN, loaded_run), busy_cpu_s=260.0)
    cold = Outcome(runs[2], wall_s=95.0, exit_code=0, run_id="r-cold", jobs_ran=2, judgement=IDLE_RUN,
                   comparison=compare(IDLE_RUN, IDLE_RUN), unpacked=3, unpacked_mb=705.4)
    return [idle, loaded, cold]


def test_the_table_has_a_row_per_run_and_the_differences_a_row_per_changed_field():
    table = runs_table(_outcomes())
    rows = {row[0]: dict(zip(table.headers, row)) for row in table.rows}
    assert rows["idle"]["verdicts as the idle run's"] == "reference"
    assert rows["saturated 1"]["load"].startswith("saturated: 4 busy processes (they took 1.3 of")
    assert rows["saturated 1"]["--jobs"] == "4" and rows["saturated 1"]["exit code"] == "1"
    assert rows["saturated 1"]["verdicts as the idle run's"] == "2/3"
    assert rows["cold cache"]["load"] == "cold runtime cache"
    assert rows["cold cache"]["runtime packages unpacked"] == "3 (705 MB)"
    differing = differences_table(_outcomes())
    assert ["saturated 1", "no-id", "—", "2 ask", "verdict", "kept", "lost"] in differing.rows
    assert differences_table([_outcomes()[0], _outcomes()[2]]) is None


def test_a_run_that_differs_or_fails_is_a_problem_and_identical_runs_are_said_so():
    said, problems = findings(_outcomes())
    assert any("saturated 1: exit code 1" in p for p in problems)
    assert any("saturated 1 (r-load): differs from the idle run in no-id" in p for p in problems)
    outcomes = _outcomes()
    outcomes[1].exit_code, outcomes[1].comparison = 0, compare(IDLE_RUN, IDLE_RUN)
    said, problems = findings(outcomes)
    assert not problems and "3/3 in each of 2 run(s)" in said[0]
    assert all(o.ok for o in outcomes)


def test_a_cold_run_that_unpacked_nothing_was_not_cold():
    outcomes = _outcomes()
    outcomes[2].unpacked = 0
    assert any("unpacked no runtime package" in p for p in findings(outcomes)[1])


def test_the_caches_are_moved_aside_for_the_run_and_put_back_after_it(tmp_path):
    cache = tmp_path / "hosts" / "local" / ".cache"
    (cache / "copilot" / "pkg" / "linux-x64" / "1.0.102").mkdir(parents=True)
    (cache / "mine").write_text("the user's")
    with ColdCaches(tmp_path / "soak", [cache]):
        assert not cache.exists()
        (cache / "copilot").mkdir(parents=True)  # what the cold run unpacks
        (cache / "copilot" / "made").write_text("by the run")
    assert (cache / "mine").read_text() == "the user's" and not (cache / "copilot" / "made").exists()
    assert not list((tmp_path / "soak").iterdir())


def test_caches_left_aside_by_a_killed_soak_are_put_back_by_the_next(tmp_path):
    cache = tmp_path / ".cache"
    cache.mkdir()
    (cache / "mine").write_text("the user's")
    stash = tmp_path / "soak" / "stash-999999999"  # no such process
    stash.mkdir(parents=True)
    (stash / MANIFEST).write_text(json.dumps([[str(cache), str(stash / "0")]]))
    os.rename(cache, stash / "0")
    assert restore_leftovers(tmp_path / "soak") == [stash]
    assert (cache / "mine").read_text() == "the user's" and not stash.exists()


def test_the_soak_block_replaces_itself_and_make_bench_carries_it_over(tmp_path):
    text = report.replace_block("# Benchmarks\n\n## 1. Overhead\n", "soak", "## Soak\n\nfirst\n")
    assert text.startswith("# Benchmarks\n\n## 1. Overhead\n\n<!-- soak: begin")
    again = report.replace_block(text, "soak", "## Soak\n\nsecond\n")
    assert "second" in again and "first" not in again and again.count("soak: begin") == 1
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(again)
    report.write(path, [("cores", "2")], [report.Section("x", "1. Something", seconds=1.0)], "Preamble.")
    written = path.read_text()
    assert "## 1. Something" in written and "## 1. Overhead" not in written
    assert written.count("soak: begin") == 1 and "second" in written


def _subreaper(on: bool) -> bool:
    """Set whether this process is a child subreaper; returns what it was."""
    libc, was = ctypes.CDLL(None, use_errno=True), ctypes.c_int(0)
    libc.prctl(37, ctypes.byref(was), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
    libc.prctl(36, int(on), 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    return bool(was.value)


def _sleeper(*tag: str) -> list[str]:
    return [sys.executable, "-c", "import time; time.sleep(60)", *tag]


def test_a_process_the_soak_started_during_its_look_is_its_own_and_an_orphan_is_another_runs(monkeypatch):
    """Both carry a host's user directory on their command line, as a container step's
    engine command does. One is started by this process while it looks (a run starts
    runtimes all the time); the other's parent has exited, as a process of another run."""
    tag = f"{USER_DIRS}/soak-test-{os.getpid()}"
    looked_at = psutil.process_iter
    started: list[subprocess.Popen] = []

    def process_iter_after_a_start(*args, **kwargs):
        started.append(subprocess.Popen(_sleeper(f"{tag}-mine")))
        return looked_at(*args, **kwargs)

    # The orphan must leave this process's tree: an earlier test's in-process run may have
    # made this process a child subreaper, which would take the orphan back as its own.
    was_subreaper = _subreaper(False)
    try:
        spawner = subprocess.run([sys.executable, "-c", "import subprocess, sys; print(subprocess.Popen(sys.argv[1:], "
                                  "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True).pid)",
                                  *_sleeper(f"{tag}-orphan")], capture_output=True, text=True, check=True)
    finally:
        _subreaper(was_subreaper)
    orphan = psutil.Process(int(spawner.stdout))
    monkeypatch.setattr(psutil, "process_iter", process_iter_after_a_start)
    try:
        found = others_using_caches()
    finally:
        for process in [*started, orphan]:
            process.kill()
        for process in started:
            process.wait()
    # Matched by pid: a line carries only the head of a command, and how much of the tag
    # survives depends on how long the checkout's path is.
    ours = {orphan.pid, *(process.pid for process in started)}
    assert [pid for line in found if (pid := int(line.split()[0])) in ours] == [orphan.pid]
    assert started  # (the look did start one)
