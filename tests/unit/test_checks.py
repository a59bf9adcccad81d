"""The checker: a verdict per turn from independent evidence."""

import pytest

from handoff.checks import judge_answer, rows_for
from handoff.fact import Fact
from handoff.results import ScenarioResult, StepResult
from handoff.scenario import Scenario, Step
from handoff.witness.answer import reply_to
from handoff.witness.server import Evidence

FACT = Fact()
RECALLED = "Your favourite retail segment is 'At Risk'."
NOT_KNOWN = "I don't know: nothing in this conversation tells me your favourite retail segment."
READY = {"event": "ready", "pid": 41, "hostname": "h"}
FINISHED = {"event": "finished", "ok": True}
TELLER = Step("A", ("create", "tell", "close"))
ASKER = Step("B", ("resume", "ask", "close"), expect="kept")


def turn(number, kind, answer):
    return {"event": "turn", "turn": number, "kind": kind, "answer": answer, "session_id": "x"}


def error(action, message):
    return {"event": "error", "action": action, "message": message}


def eventlog(closed):
    return {"event": "eventlog", "found": True, "events": 6, "starts": 1, "resumes": 1,
            "closed_before_resume": closed, "resume_event_count": 5, "already_in_use": False, "branch_points": 0}


def ran(name, *events, **outcome):
    outcome.setdefault("exit_code", 0)
    return StepResult("s", name, "local", "shared", "x", events=list(events), **outcome)


def seen(step, number, fact_sent):
    return Evidence(at=0.0, scenario="s", step=step, host="local", turn=str(number), messages_received=3,
                    fact_sent=fact_sent, reply_kind="recalled" if fact_sent else "not-known", reply="")


def rows(specs, results, evidence=(), fact=FACT):
    scenario = Scenario("s", "T", "P", "D", steps=tuple(specs))
    result = ScenarioResult("s", "T", "P", "D", fact.value, steps=list(results), evidence=list(evidence))
    return rows_for(scenario, result, fact)


def asked(*events, evidence=(), spec=ASKER, **outcome):
    """The single row of a step that asks (turn 2)."""
    [row] = rows([spec], [ran("B", READY, *events, **outcome)], evidence)
    return row


def test_answer_with_the_fact_that_the_model_was_sent_is_kept():
    row = asked(turn(2, "ask", RECALLED), FINISHED, evidence=[seen("B", 2, True)])
    assert (row.verdict, row.match, row.fact_reached_model, row.kind, row.turn) == ("kept", True, "yes", "ask", "2")
    assert row.ran_in == "B pid 41@h"
    assert row.store == "shared"


def test_answer_without_the_fact_that_the_model_was_not_sent_is_lost():
    row = asked(turn(2, "ask", NOT_KNOWN), FINISHED, evidence=[seen("B", 2, False)])
    assert (row.verdict, row.match, row.fact_reached_model) == ("lost", False, "no")


def test_a_lost_turn_matches_a_lost_expectation():
    spec = Step("B", ("resume", "ask", "close"), expect="lost")
    assert asked(turn(2, "ask", NOT_KNOWN), FINISHED, evidence=[seen("B", 2, False)], spec=spec).match is True


@pytest.mark.parametrize("answer, sent", [(RECALLED, False), (NOT_KNOWN, True)])
def test_disagreeing_evidence_is_unknown(answer, sent):
    row = asked(turn(2, "ask", answer), FINISHED, evidence=[seen("B", 2, sent)])
    assert (row.verdict, row.match) == ("unknown", False)


def test_no_witness_record_is_unknown():
    row = asked(turn(2, "ask", RECALLED), FINISHED, evidence=[seen("A", 2, True), seen("B", 1, True)])
    assert (row.verdict, row.fact_reached_model) == ("unknown", "no request")


def test_any_record_of_a_retried_turn_that_carried_the_fact_counts():
    row = asked(turn(2, "ask", RECALLED), FINISHED, evidence=[seen("B", 2, False), seen("B", 2, True)])
    assert row.verdict == "kept"


@pytest.mark.parametrize("action, message", [
    ("resume", "JSON-RPC error: Session not found: x"),
    ("resume-most-recent", "list_sessions returned no sessions to resume"),
])
def test_a_store_without_the_session_is_lost(action, message):
    row = asked(error(action, message), {"event": "skipped", "action": "ask"}, FINISHED)
    assert (row.verdict, row.turn, row.fact_reached_model) == ("lost", "—", "no request")
    assert message in row.basis


@pytest.mark.parametrize("action", ["resume", "ask"])
def test_another_error_is_unknown(action):
    row = asked(error(action, "connection reset by peer"), FINISHED)
    assert row.verdict == "unknown"
    assert "not a 'not found'" in row.basis


def test_a_not_found_error_outside_opening_or_asking_is_not_a_loss():
    row = asked(error("metadata", "Session not found: x"), FINISHED)
    assert row.verdict == "unknown"


def test_a_worker_that_crashed_before_answering_is_unknown_never_lost():
    row = asked(exit_code=-9, stderr_tail="Traceback (most recent call last):\nRuntimeError: boom\n")
    assert row.verdict == "unknown"
    assert "without 'finished' (exit code -9): RuntimeError: boom" in row.basis


def test_a_worker_that_timed_out_is_unknown():
    assert asked(timed_out=True).verdict == "unknown"


def test_a_finished_worker_with_no_answer_is_unknown():
    assert asked(FINISHED).verdict == "unknown"


def test_closed_before_resume_expectation_is_checked():
    spec = Step("B", ("resume", "ask", "close"), expect="kept", closed_before_resume=True)
    evidence = [seen("B", 2, True)]
    good = asked(turn(2, "ask", RECALLED), eventlog(True), FINISHED, evidence=evidence, spec=spec)
    bad = asked(turn(2, "ask", RECALLED), eventlog(False), FINISHED, evidence=evidence, spec=spec)
    no_log = asked(turn(2, "ask", RECALLED), FINISHED, evidence=evidence, spec=spec)
    assert (good.verdict, good.match, good.expected, good.closed_before_resume) == ("kept", True, "kept, closed", "yes")
    assert (bad.verdict, bad.match, bad.closed_before_resume) == ("kept", False, "no")
    assert "not a resume-after-close" in bad.basis
    assert (no_log.match, no_log.closed_before_resume) == (False, "—")


def test_tell_turns_get_no_verdict():
    tell_row, ask_row = rows(
        [TELLER, ASKER],
        [ran("A", READY, turn(1, "tell", "OK"), FINISHED), ran("B", READY, turn(2, "ask", RECALLED), FINISHED)],
        [seen("A", 1, True), seen("B", 2, True)],
    )
    assert (tell_row.kind, tell_row.verdict, tell_row.expected, tell_row.match) == ("tell", "", "", None)
    assert (tell_row.step, tell_row.answer, tell_row.fact_reached_model) == ("A", "OK", "yes")
    assert (ask_row.step, ask_row.verdict, ask_row.match) == ("B", "kept", True)


def test_event_log_column_describes_the_resume():
    log = eventlog(True) | {"already_in_use": True, "starts": 2}
    row = asked(turn(2, "ask", RECALLED), log, FINISHED, evidence=[seen("B", 2, True)])
    assert row.event_log == "resume loaded 5 events; alreadyInUse; 2 session.start roots"


@pytest.mark.parametrize("answer, sent, verdict", [
    (RECALLED, [True], "kept"),
    ("AT RISK", [True], "kept"),
    (NOT_KNOWN, [False], "lost"),
    (None, [False], "lost"),
    (RECALLED, [False], "unknown"),
    (NOT_KNOWN, [True], "unknown"),
    (RECALLED, [], "unknown"),
    (None, [], "unknown"),
])
def test_judge_answer(answer, sent, verdict):
    assert judge_answer(answer, sent, FACT)[0] == verdict


def test_a_record_that_checked_nothing_is_not_evidence_of_loss():
    assert judge_answer(NOT_KNOWN, [None], FACT)[0] == "unknown"


def test_a_short_value_inside_the_not_known_reply_is_still_lost():
    fact = Fact("No", "answer")
    reply = reply_to([{"role": "user", "content": fact.question_prompt}])
    assert reply.kind == "not-known"
    assert judge_answer(reply.text, [False], fact)[0] == "lost"


@pytest.mark.parametrize("answer, verdict", [
    ("You said your favourite was at risk, the segment.", "kept"),  # free text, any case
    ("You told me 'AT RISK'.", "kept"),
    ("I have no record of a favourite segment.", "lost"),
    (None, "lost"),
])
def test_without_wire_records_the_answer_alone_decides(answer, verdict):
    judged, basis, evidence = judge_answer(answer, [], FACT, seen_on_the_wire=False)
    assert (judged, evidence) == (verdict, "answer only")
    assert "cannot be recorded" in basis


def test_with_wire_records_both_pieces_are_named_as_the_evidence():
    assert judge_answer(RECALLED, [True], FACT)[2] == "answer + wire"


def test_without_wire_records_the_table_says_so_instead_of_no_request():
    scenario = Scenario("s", "T", "P", "D", steps=(ASKER,))
    result = ScenarioResult("s", "T", "P", "D", FACT.value, steps=[ran("B", READY, turn(2, "ask", RECALLED), FINISHED)])
    [row] = rows_for(scenario, result, FACT, seen_on_the_wire=False)
    assert (row.verdict, row.evidence, row.fact_reached_model) == ("kept", "answer only", "not recorded")


def test_a_resume_without_provider_settings_is_its_own_verdict():
    spec = Step("B", ("resume", "ask", "close"), expect="no-provider", provider="omitted")
    message = "Session error: Execution failed: InvalidArg, No GitHub OAuth token or Copilot HMAC key provided"
    row = asked({"event": "action", "action": "resume"}, error("ask", message), FINISHED, spec=spec)
    assert (row.verdict, row.evidence, row.match) == ("no-provider", "runtime error", True)
    assert "does not store its provider settings" in row.basis


def test_any_other_ask_failure_stays_unknown():
    row = asked(error("ask", "Execution failed: something else"), FINISHED)
    assert (row.verdict, row.evidence) == ("unknown", "runtime error")
