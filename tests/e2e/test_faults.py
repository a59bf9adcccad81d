"""The fault scenarios against the real runtime, once (with a fact full of quotes, a
backslash and non-ASCII, so nothing is tuned to the default): every verdict as its file
expects, each fault recorded and healed, the one silent loss found where it was measured,
and nothing left behind."""

from __future__ import annotations

import os

import pytest

from handoff import leftovers, scenario_files
from handoff.checker.verdicts import ExitCode
from handoff.words import Verdict
from tests.e2e.conftest import OTHER_FACT, run_scenarios


@pytest.fixture(scope="module")
def faults():
    return run_scenarios(scenario_files.tagged("faults"), OTHER_FACT, jobs=3)


def test_every_fault_scenario_comes_out_as_its_file_says(faults):
    assert not faults.judgement.contradicted and not faults.judgement.unjudged
    assert faults.judgement.exit_code() == ExitCode.AS_EXPECTED
    assert {s.name for s in faults.record.scenarios} == {s.name for s in scenario_files.tagged("faults")}


def test_nothing_is_left_behind_no_server_stopped_no_rule_no_small_disk(faults):
    assert leftovers.find(of=os.getpid()) == []  # (the namespaces that held the rules are gone too)
    for record in faults.record.scenarios:
        for step in record.steps:
            for fault in step.faults:
                healable = fault.kind in ("store-outage", "partition", "disk-full")
                assert (fault.healed_at is not None) == healable, (record.name, step.step, fault)


def test_the_only_silent_loss_is_the_cut_copy_and_the_guard_made_it_loud(faults):
    [lost] = faults.judgement.silent_losses
    assert (lost.scenario, lost.step.step, lost.as_expected) == ("fault-cut-copy", "A", True)
    guarded, raw = faults.asked("fault-cut-copy")
    assert guarded.verdict == Verdict.REFUSED and raw.verdict == Verdict.LOST
    assert raw.step.eventlog.messages_before_resume == 0  # the torn question was dropped without a word


def test_a_kill_mid_turn_keeps_turn_1_and_nothing_of_the_unanswered_question(faults):
    steps = faults.steps("fault-kill-mid-turn")
    assert [(f.kind, f.point) for f in faults.scenario("fault-kill-mid-turn").steps[0].faults] == [("kill", "mid-turn")]
    assert steps["A"].finished is None and [t.turn for t in steps["A"].turns] == [1]
    # The question itself may be in the log or not: the runtime writes its events in batches, and
    # on a busy machine the batch with the user message was written before the kill landed. Its
    # answer cannot be: the witness held it until the kill, by construction.
    assert steps["B"].eventlog.messages_before_resume in (1, 2)


def test_a_runtime_killed_mid_turn_is_a_time_out_then_the_same_app_recovers(faults):
    failed, kept = faults.asked("fault-runtime-killed")
    assert failed.verdict == Verdict.FAILED_LOUDLY and "Timeout" in failed.reason
    assert kept.verdict == Verdict.KEPT and kept.step.ready.pid == failed.step.ready.pid


@pytest.mark.parametrize("name, step, says", [
    ("fault-store-outage-before-resume", "B1", "cannot connect to PostgreSQL"),
    ("fault-partition-resume", "B1", "Connection refused"),
])
def test_a_store_out_of_reach_fails_the_resume_loudly_and_it_recovers_after_the_heal(faults, name, step, says):
    failed, kept = faults.asked(name)
    assert failed.step.step == step and failed.verdict == Verdict.FAILED_LOUDLY and says in failed.reason
    assert kept.verdict == Verdict.KEPT
    [recovery] = next(s for s in faults.judgement.scenarios if s.name == name).recoveries
    assert recovery.step == step and recovery.seconds is not None and recovery.seconds > 0


def test_a_store_outage_inside_a_write_fails_the_tell_loudly(faults):
    tells = [t for t in faults.turns("fault-store-outage-during-turn") if t.kind == "tell"]
    assert [t.verdict for t in tells] == [None, Verdict.FAILED_LOUDLY]
    assert "Failed to persist session events" in tells[1].reason


def test_one_process_gets_through_three_restarts_of_its_database_and_an_outage_is_said_as_one(faults):
    name = "fault-store-restart"
    steps = faults.steps(name)
    a = steps["A"]
    assert [(f.kind, f.point, f.healed_at) for f in faults.scenario(name).steps[0].faults] == [
        ("store-restart", "inside-write", None), ("store-restart", "after-turn", None), ("store-restart", "hold", None)]
    assert not a.failures and [t.kind for t in a.turns] == ["tell", "ask", "ask"]  # nothing reached the app
    tell, *asks = faults.turns(name)[:3]
    assert tell.kind == "tell" and tell.verdict is None and [t.verdict for t in asks] == [Verdict.KEPT] * 2
    [failed] = [t for t in faults.asked(name) if t.step.step == "B"]
    assert failed.verdict == Verdict.FAILED_LOUDLY and "is unreachable" in failed.reason
    assert "Session not found" not in failed.reason
    # A new process resumes every question A asked or told, each once (the append the
    # restart cut off at its commit was not stored twice).
    assert steps["C"].eventlog.messages_before_resume == 3 and faults.asked(name)[-1].verdict == Verdict.KEPT


def test_a_full_disk_tears_the_log_but_the_told_turn_is_in_it(faults):
    a = faults.steps("fault-disk-full")["A"]
    assert [t.kind for t in a.turns] == ["tell", "tell"] and a.eventlog.unreadable_lines >= 1
    assert faults.steps("fault-disk-full")["B"].eventlog.messages_before_resume == 2


@pytest.mark.parametrize("name", ["fault-torn-log", "fault-corrupt-log"])
def test_a_torn_or_corrupt_line_is_dropped_without_a_word(faults, name):
    steps = faults.steps(name)
    assert steps["B"].eventlog.resume_event_count == steps["A"].eventlog.events - 1
    assert not steps["B"].failures


def test_a_kill_with_a_permission_request_pending_drops_the_call_and_the_tool_never_runs(faults):
    """The runtime asks the app's handler about the model's call of an asking tool; the
    kill lands there (the worker said holding inside the handler). The tool never ran:
    the witness saw one request of A2 (the call) and no request carried the tool's answer;
    B's question is answered from A's turn. Whether A2's resume and the model's call reached
    the log before the kill races the runtime's batched writes, so that is not asserted:
    when the call did, B's history holds it with whatever the runtime puts in place of an
    answer that never came (seen once, on a loaded machine), never the tool's."""
    name = "fault-kill-inside-permission"
    steps = faults.steps(name)
    assert steps["A2"].holding.point == "inside-permission" and steps["A2"].finished is None
    seen = [e for e in faults.scenario(name).evidence if e.step == "A2"]
    assert [e.reply_kind for e in seen] == ["tool-call"] and seen[0].tool_called == "lookup_favourite"
    [asked] = faults.asked(name)
    assert asked.verdict == Verdict.KEPT and asked.fact_in == ("user",)
    assert not any(role == "tool" and faults.fact.is_in(text)
                   for e in faults.scenario(name).evidence for role, text in e.conversation)
