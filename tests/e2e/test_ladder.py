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


def test_the_default_output_fits_a_terminal_and_a_screen(matrix):
    """What `handoff run` prints for the default matrix: at most 100 columns, and about
    three lines per scenario (~80 for 28): the plan, what was proved (at most 20 lines),
    one row per question, one line per rung, the summary."""
    from handoff.report import cells
    from handoff.report.formats import render

    lines = render(matrix.record, matrix.judgement).splitlines()
    assert max(len(line) for line in lines) <= 100
    summary = lines.index("") + 1, lines.index("", lines.index("") + 1)  # the block after the plan
    assert summary[1] - summary[0] <= 20, lines[summary[0]:summary[1]]
    timed = [line for line in lines if line.startswith(cells.TIMED + " ")]  # a note under the table, 2 lines each
    assert len(lines) - (summary[1] - summary[0]) - 3 * len(timed) <= 3 * len(matrix.record.scenarios), len(lines)
    assert lines[0].startswith("Fact to remember:") and lines[1].startswith("Plan:")
    for ran in matrix.record.scenarios:  # one line per rung, whatever came out
        rung = re.compile(rf"{re.escape(ran.name)} (proved|did NOT|could not|crashed|was skipped)")
        assert sum(1 for line in lines if rung.match(line)) == 1, ran.name
    # The first screen answers what persistence proved: every condition of the lab, each
    # with the rungs that kept the fact, within the top 25 lines.
    first_screen = "\n".join(lines[:25])
    rungs = len(matrix.record.scenarios)  # every rung of the ladder, however many it has grown to
    assert f"What persistence proved in this run ({rungs} rungs; every rung came out as its file says):" in first_screen
    for condition in ("same process", "new process", "new machine", "new container", "database store",
                      "compatible runtime", "authorization", "faults"):
        assert re.search(rf"^  {condition} +resumed|^  {condition} +any id|^  {condition} +kept", first_screen,
                         re.M), condition
