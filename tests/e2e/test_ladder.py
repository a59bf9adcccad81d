"""Every scenario of the default matrix, run for real, comes out as its file expects."""

from __future__ import annotations

import pytest

from handoff import scenario
from handoff.fact import Fact

from tests.e2e.conftest import OTHER_FACT, dead_runtime_markers, handoff_processes

pytestmark = pytest.mark.e2e
NAMES = list(scenario.available())


def _rows(outcome, name):
    return [row for row in outcome.rows if row.scenario == name]


@pytest.mark.parametrize("name", NAMES)
def test_scenario_comes_out_as_expected(default_matrix, name):
    _, outcome = default_matrix
    judged = [row for row in _rows(outcome, name) if row.match is not None]
    assert judged, f"{name} produced no judged turn"
    for row in judged:
        assert row.match, f"{name} turn {row.turn}: got {row.verdict} ({row.basis}), expected {row.expected}"


@pytest.mark.parametrize("name", NAMES)
def test_another_fact_gives_the_same_verdicts(default_matrix, other_fact_matrix, name):
    _, first = default_matrix
    _, second = other_fact_matrix
    assert [r.verdict for r in _rows(first, name)] == [r.verdict for r in _rows(second, name)]


def test_kept_answers_carry_the_fact_that_was_told(other_fact_matrix):
    _, outcome = other_fact_matrix
    kept = [row for row in outcome.rows if row.verdict == "kept"]
    assert kept
    for row in kept:
        assert OTHER_FACT.value in row.answer and Fact().value not in row.answer


def test_cross_process_ran_in_two_processes_with_their_own_runtimes(default_matrix):
    _, outcome = default_matrix
    result = next(r for r in outcome.results if r.name == "cross-process")
    a, b = result.steps
    assert a.ready["pid"] != b.ready["pid"]
    assert a.ready["runtime_version"] == b.ready["runtime_version"] == "1.0.102"
    assert b.first("eventlog")["closed_before_resume"] is True


def test_isolated_store_shows_the_runtime_error(default_matrix):
    _, outcome = default_matrix
    row = next(r for r in _rows(outcome, "isolated-store") if r.kind == "ask")
    assert row.verdict == "lost"
    assert "Session not found" in row.basis


def test_crash_scenario_really_killed_process_a(default_matrix):
    _, outcome = default_matrix
    result = next(r for r in outcome.results if r.name == "crash-after-turn")
    a = result.steps[0]
    assert a.killed_on_purpose and not a.finished and a.exit_code == -9


def test_forgot_to_close_is_flagged(default_matrix):
    _, outcome = default_matrix
    row = next(r for r in _rows(outcome, "forgot-to-close") if r.kind == "ask")
    assert row.closed_before_resume == "no"
    assert "not a resume-after-close" in row.basis


def test_nothing_is_left_running(default_matrix, other_fact_matrix):
    assert handoff_processes() == []


def test_runtimes_killed_on_purpose_leave_no_in_use_markers(default_matrix, other_fact_matrix):
    """The runtimes the crash scenarios kill cannot remove their in-use markers; the
    coordinator does (handoff/runtime_markers.py). With no runtime running any more, no
    marker may be left in any host's user directory, the local one included."""
    assert [r for r in default_matrix[1].results if any(s.killed_on_purpose for s in r.steps)]
    assert dead_runtime_markers() == []


def test_every_worker_whose_runtime_started_reports_the_cpu_that_runtime_used(default_matrix):
    """The runtime is reaped before the worker's ``finished`` line, so its CPU time is in
    the report (make bench splits a run's CPU with it)."""
    _, outcome = default_matrix
    reported = [step.first("finished")["cpu_s"] for result in outcome.results for step in result.steps
                if step.finished and step.ready.get("runtime_version")]
    assert len(reported) > 40
    assert all(cpu["runtime"] > 0.1 and cpu["worker"] > 0 for cpu in reported)
