"""Every scenario of the default matrix, run for real, comes out as its file expects."""

from __future__ import annotations

import os
import re

import pytest

from handoff import scenario_files
from handoff.fact import Fact, quote
from handoff.faults.base import TAMPERED_VALUE
from handoff.witness.answer import RECALLED

from handoff.words import Verdict
from tests.e2e.conftest import OTHER_FACT, handoff_processes

pytestmark = pytest.mark.e2e
NAMES = [loaded.name for loaded in scenario_files.select([])]  # the ladder: the fault scenarios run in test_faults.py


@pytest.mark.parametrize("name", NAMES)
def test_scenario_comes_out_as_expected(matrix, name):
    skipped = matrix.scenario(name).skipped
    if skipped:  # a capability or version this machine lacks: said, not failed
        pytest.skip(f"{name}: {skipped}")
    judged = [turn for turn in matrix.turns(name) if turn.expectations]
    assert judged, f"{name} produced no judged turn"
    for turn in judged:
        assert turn.as_expected, f"{name} turn {turn.turn}: got {turn.verdict} ({turn.reason}), expected {turn.expectations}"


def test_kept_answers_carry_the_fact_that_was_told(matrix):
    """Exactly the witness's recall sentence, the value quoted as the prompt quoted it."""
    kept = [turn for turn in matrix.turns() if turn.verdict == Verdict.KEPT]
    assert kept
    for turn in kept:
        assert turn.answer == RECALLED.format(topic=OTHER_FACT.topic, value=quote(OTHER_FACT.value))
        assert Fact().value not in turn.answer


def test_the_tampered_fact_is_the_one_the_witness_answers_with(matrix):
    raw = matrix.steps("tamper")["raw"]
    assert raw.turns[0].answer == RECALLED.format(topic=OTHER_FACT.topic, value=TAMPERED_VALUE)


def test_cross_process_ran_in_two_processes_with_their_own_runtimes(matrix):
    a, b = matrix.steps("cross-process").values()
    assert a.ready.pid != b.ready.pid
    assert a.ready.runtime_version == b.ready.runtime_version == "1.0.102"
    assert b.eventlog.closed_before_resume is True


def test_isolated_store_shows_the_runtime_error(matrix):
    [turn] = matrix.asked("isolated-store")
    assert turn.verdict == Verdict.LOST
    assert "Session not found" in turn.reason


def test_crash_scenario_really_killed_process_a(matrix):
    a = matrix.steps("crash-after-turn")["A"]
    assert a.killed_on_purpose and a.finished is None and a.record.exit_code == -9
    # It could not report its CPU; the kill noted what it and its runtime had used (a
    # runtime that started and took a turn: well over a tenth of a CPU second).
    killed = a.record.killed_cpu_s
    assert killed is not None and killed.runtime > 0.1 and killed.worker > 0


def test_a_worker_that_ended_by_itself_has_no_cpu_noted_at_a_kill(matrix):
    b = matrix.steps("crash-after-turn")["B"]
    assert b.finished is not None and b.record.killed_cpu_s is None


def test_forgot_to_close_is_flagged(matrix):
    [turn] = matrix.asked("forgot-to-close")
    assert turn.step.closed_before_resume is False
    assert "not a resume-after-close" in turn.reason


def test_nothing_is_left_running(matrix):
    assert handoff_processes(os.getpid()) == []  # the matrix ran in this process


def test_the_matrix_kills_runtimes_on_purpose(matrix):
    """Its crash scenarios kill runtimes, which cannot remove their in-use markers; the
    coordinator does (handoff/runtime_markers.py). That none is left is checked once every
    run of the suite has ended (test_cleanup.py, run on its own after the others)."""
    assert [s for s in matrix.record.scenarios if any(step.view().killed_on_purpose for step in s.steps)]


def test_every_worker_whose_runtime_started_reports_the_cpu_that_runtime_used(matrix):
    """The runtime is reaped before the worker's ``finished`` line, so its CPU time is in
    the report (make bench splits a run's CPU with it)."""
    reported = [view.finished.cpu_s for s in matrix.record.scenarios for step in s.steps
                if (view := step.view()).finished and view.ready]
    assert len(reported) > 40
    assert all(cpu.runtime > 0.1 and cpu.worker > 0 for cpu in reported)


def test_the_run_is_judged_as_expected_and_exits_0(matrix):
    assert matrix.judgement.exit_code() == 0


def test_the_default_output_fits_a_terminal_and_ends_with_the_answer(matrix):
    """What `handoff run` prints for the default matrix, at 100 columns: no wider, and no
    more than 100 lines (the slow rungs add one row each); the plan, one row per
    scenario, then what was proved by condition and the count. A
    terminal shows the end: the last 25 lines hold every condition of the lab, in words,
    with the rungs that show it named (no count in their place). Each rung's own line is
    in --wide."""
    from handoff.report.formats import render

    lines = render(matrix.record, matrix.judgement).splitlines()
    assert max(len(line) for line in lines) <= 100
    assert len(lines) <= 100, f"{len(lines)} lines: the learner scrolls past the table to find the answer"
    assert lines[0].startswith("Fact to remember:") and lines[1].startswith("Plan:")
    rungs = len(matrix.record.scenarios)  # every rung of the ladder, however many it has grown to
    last_screen = "\n".join(lines[-25:])
    assert f"What persistence proved in this run ({rungs} rungs; every rung came out as its file says):" in last_screen
    from handoff.chat.browser import browser_problem

    for condition in ("same process", "new process", "new machine", "new container", "database store",
                      "compatible runtime", "authorization", "faults", *(() if browser_problem() else ("web app",))):
        assert re.search(rf"^  {condition} — \S", last_screen, re.M), condition
    named = " ".join(last_screen.split())
    assert all(ran.name in named for ran in matrix.record.scenarios)  # every rung named in the answer
    assert not re.search(r" \+\d", named)
    assert lines[-1].startswith(f"{rungs} scenarios, ")
    wide = render(matrix.record, matrix.judgement, wide=True).splitlines()
    for ran in matrix.record.scenarios:  # one line per rung, whatever came out, in --wide
        rung = re.compile(rf"{re.escape(ran.name)} (proved|did NOT|could not|crashed|was skipped)")
        assert sum(1 for line in wide if rung.match(line)) == 1, ran.name