"""The checker: a verdict per turn from independent evidence."""

import msgspec
import pytest

from handoff.checker.checks import judge_answer, judge_scenario
from handoff.fact import Fact
from handoff.protocol import ActionDone, ActionFailed, Backend, EventLog, Finished, Ready, Skipped, Turn, encode
from handoff.report import cells
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.answer import reply_to
from handoff.witness.evidence import Evidence

FACT = Fact()
RECALLED = "Your favourite retail segment is 'At Risk'."
NOT_KNOWN = "I don't know: nothing in this conversation tells me your favourite retail segment."
READY = Ready(t=0.0, pid=41, hostname="h", address=None, home="/h", runtime_version="1.0.102", sdk_version="1.0.25",
              runtime_start_ms=300)
FINISHED = Finished(t=0.0, ok=True)
TELLER = Step("A", ("create", "tell", "close"))
ASKER = Step("B", ("resume", "ask", "close"), expect="kept")


def turn(number, kind, answer):
    """The step's ``number``-th turn (workers count their own turns from 1)."""
    return Turn(t=0.0, turn=number, kind=kind, session_id="x", prompt="p", answer=answer, ms=1)


def error(action, message):
    return ActionFailed(t=0.0, action=action, message=message)


def eventlog(closed):
    return EventLog(t=0.0, session_id="x", found=True, events=6, starts=1, resumes=1, closed_before_resume=closed,
                    resume_event_count=5, already_in_use=False, branch_points=0)


def ran(name, *events, **outcome):
    outcome.setdefault("exit_code", 0)
    lines = [encode(e).decode().rstrip("\n") if not isinstance(e, str) else e for e in events]
    return StepRecord(name, "local", "shared", "home", "x", lines=lines, **outcome)


def seen(step, number, fact_sent):
    """The witness's record of the step's ``number``-th turn."""
    return Evidence(at=0.0, scenario="s", step=step, host="local", turn=str(number), messages_received=3,
                    fact_sent=fact_sent, reply_kind="recalled" if fact_sent else "not-known", reply="")


def rows(specs, results, evidence=(), fact=FACT, backend=Backend()):
    scenario = Scenario("s", "T", "P", "D", steps=tuple(specs))
    record = ScenarioRecord("s", scenario, steps=list(results), evidence=list(evidence))
    return list(judge_scenario(record, fact, backend).turns)


def asked(*events, evidence=(), spec=ASKER, **outcome):
    """The row of step B's ask, turn 2 of the scenario (A told the fact in turn 1)."""
    teller = ran("A", READY, turn(1, "tell", "OK"), FINISHED)
    *_, row = rows([TELLER, spec], [teller, ran("B", READY, *events, **outcome)], [seen("A", 1, True), *evidence])
    return row


def test_answer_with_the_fact_that_the_model_was_sent_is_kept():
    row = asked(turn(1, "ask", RECALLED), FINISHED, evidence=[seen("B", 1, True)])
    assert (row.verdict, row.as_expected, row.fact_reached_model, row.kind, row.turn) == ("kept", True, "yes", "ask", 2)
    assert cells.ran_in(row.step) == "B pid 41@h, runtime 1.0.102, SDK 1.0.25"
    assert cells.store(row.step) == "shared"


def test_answer_without_the_fact_that_the_model_was_not_sent_is_lost():
    row = asked(turn(1, "ask", NOT_KNOWN), FINISHED, evidence=[seen("B", 1, False)])
    assert (row.verdict, row.as_expected, row.fact_reached_model) == ("lost", False, "no")


def test_a_lost_turn_matches_a_lost_expectation():
    spec = Step("B", ("resume", "ask", "close"), expect="lost")
    assert asked(turn(1, "ask", NOT_KNOWN), FINISHED, evidence=[seen("B", 1, False)], spec=spec).as_expected is True


@pytest.mark.parametrize("answer, sent", [(RECALLED, False), (NOT_KNOWN, True)])
def test_disagreeing_evidence_is_unknown(answer, sent):
    row = asked(turn(1, "ask", answer), FINISHED, evidence=[seen("B", 1, sent)])
    # unknown contradicts nothing: it says the evidence does not settle it (exit code 4, not 1)
    assert (row.verdict, row.as_expected) == ("unknown", None)


def test_no_witness_record_is_unknown():
    row = asked(turn(1, "ask", RECALLED), FINISHED, evidence=[seen("A", 2, True), seen("B", 2, True)])
    assert (row.verdict, row.fact_reached_model) == ("unknown", "no request")


def test_any_record_of_a_retried_turn_that_carried_the_fact_counts():
    row = asked(turn(1, "ask", RECALLED), FINISHED, evidence=[seen("B", 1, False), seen("B", 1, True)])
    assert row.verdict == "kept"


@pytest.mark.parametrize("action, message", [
    ("resume", "JSON-RPC error: Session not found: x"),
    ("resume-most-recent", "list_sessions returned no sessions to resume"),
])
def test_a_store_without_the_session_is_lost(action, message):
    row = asked(error(action, message), Skipped(t=0.0, action="ask", reason="no open session"), FINISHED)
    assert (row.verdict, row.turn, row.fact_reached_model) == ("lost", None, "no request")
    assert message in row.reason


@pytest.mark.parametrize("action", ["resume", "ask"])
def test_another_error_failed_loudly(action):
    row = asked(error(action, "connection reset by peer"), FINISHED)
    assert row.verdict == "failed-loudly"
    assert "not a 'not found'" in row.reason


def test_a_not_found_error_outside_opening_or_asking_is_not_a_loss():
    row = asked(error("metadata", "Session not found: x"), FINISHED)
    assert row.verdict == "failed-loudly"


def test_a_worker_that_crashed_before_answering_is_unknown_never_lost():
    row = asked(exit_code=-9, stderr_tail="Traceback (most recent call last):\nRuntimeError: boom\n")
    assert row.verdict == "unknown"
    assert "without 'finished' (exit code -9): RuntimeError: boom" in row.reason


def test_a_worker_that_timed_out_is_unknown():
    assert asked(timed_out=True).verdict == "unknown"


def test_a_finished_worker_with_no_answer_is_unknown():
    assert asked(FINISHED).verdict == "unknown"


def test_closed_before_resume_expectation_is_checked():
    spec = Step("B", ("resume", "ask", "close"), expect="kept", closed_before_resume=True)
    evidence = [seen("B", 1, True)]
    good = asked(turn(1, "ask", RECALLED), eventlog(True), FINISHED, evidence=evidence, spec=spec)
    bad = asked(turn(1, "ask", RECALLED), eventlog(False), FINISHED, evidence=evidence, spec=spec)
    no_log = asked(turn(1, "ask", RECALLED), FINISHED, evidence=evidence, spec=spec)
    assert (good.verdict, good.as_expected, cells.expected(good), cells.closed_before_resume(good)) == (
        "kept", True, "kept, closed", "yes")
    assert (bad.verdict, bad.as_expected, cells.closed_before_resume(bad)) == ("kept", False, "no")
    assert "not a resume-after-close" in bad.reason
    # no event log: the expectation cannot be checked, which is not a contradiction
    assert (no_log.as_expected, cells.closed_before_resume(no_log)) == (None, "—")


def test_tell_turns_get_no_verdict():
    tell_row, ask_row = rows(
        [TELLER, ASKER],
        [ran("A", READY, turn(1, "tell", "OK"), FINISHED), ran("B", READY, turn(1, "ask", RECALLED), FINISHED)],
        [seen("A", 1, True), seen("B", 1, True)],
    )
    assert (tell_row.kind, tell_row.verdict, cells.expected(tell_row), tell_row.as_expected) == ("tell", None, "", None)
    assert (tell_row.step.step, tell_row.answer, tell_row.fact_reached_model) == ("A", "OK", "yes")
    assert (ask_row.step.step, ask_row.verdict, ask_row.as_expected, ask_row.turn) == ("B", "kept", True, 2)


def test_event_log_column_describes_the_resume():
    log = msgspec.structs.replace(eventlog(True), already_in_use=True, starts=2)
    row = asked(turn(1, "ask", RECALLED), log, FINISHED, evidence=[seen("B", 1, True)])
    assert cells.event_log(row) == "resume loaded 5 events; alreadyInUse; 2 session.start roots"


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
    copilot = Backend("copilot", "claude-haiku-4.5", token_env="GH_TOKEN")
    [row] = rows([ASKER], [ran("B", READY, turn(1, "ask", RECALLED), FINISHED)], backend=copilot)
    assert (row.verdict, row.evidence, row.fact_reached_model) == ("kept", "answer only", "not recorded")


def test_a_resume_without_provider_settings_is_its_own_verdict():
    spec = Step("B", ("resume", "ask", "close"), expect="no-provider", provider="omitted")
    message = "Session error: Execution failed: InvalidArg, No GitHub OAuth token or Copilot HMAC key provided"
    row = asked(ActionDone(t=0.0, action="resume", session_id="x", ms=1), error("ask", message), FINISHED, spec=spec)
    assert (row.verdict, row.evidence, row.as_expected) == ("no-provider", "runtime error", True)
    assert "does not store its provider settings" in row.reason


def test_any_other_ask_failure_failed_loudly():
    row = asked(error("ask", "Execution failed: something else"), FINISHED)
    assert (row.verdict, row.evidence) == ("failed-loudly", "runtime error")


# Versions: an answer written to the log but never delivered, a substituted version, skipped events

TIMEOUT = "Timeout after 20.0s waiting for response completion"


def answered_in_the_log(reply, prompt=FACT.question_prompt):
    return msgspec.structs.replace(eventlog(True), last_prompt=prompt, last_reply=reply)


def test_an_answer_in_the_log_that_never_reached_the_app_is_undelivered():
    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    row = asked(error("ask", TIMEOUT), answered_in_the_log(RECALLED), FINISHED, evidence=[seen("B", 1, True)],
                spec=spec)
    assert (row.verdict, row.evidence, row.as_expected, row.fact_reached_model) == (
        "undelivered", "log + wire", True, "yes")
    assert row.turn == 2  # the turn happened (the log shows it); only its answer went missing
    assert "never delivered" in row.reason and TIMEOUT in row.reason and RECALLED in row.reason
    assert cells.answer(row) == "—"  # the app got nothing
    assert "the log holds a reply the app never got" in cells.event_log(row)


def timed_out(seconds=20.0):
    return ActionFailed(t=0.0, action="ask", message=TIMEOUT, turn=1, ms=round(seconds * 1000), timeout_s=seconds)


def test_an_undelivered_verdict_says_it_rested_on_a_time_out_and_when_the_log_had_the_answer():
    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    log = msgspec.structs.replace(answered_in_the_log(RECALLED), last_reply_ms=1300)
    row = asked(timed_out(), log, FINISHED, evidence=[seen("B", 1, True)], spec=spec)
    assert (row.verdict, row.as_expected) == ("undelivered", True)
    assert row.timed == "no answer within 20 s; the session's log has the answer at +1.3 s"
    assert cells.verdict(row) == "undelivered*" and cells.bare_verdict(row) == "undelivered"
    assert cells.timed_note(row) == ("* s turn 2 (B): undelivered rested on a time-out: no answer within 20 s; "
                                     "the session's log has the answer at +1.3 s.")


def test_an_answer_that_reached_the_log_late_in_the_time_out_is_named_a_race():
    log = msgspec.structs.replace(answered_in_the_log(RECALLED), last_reply_ms=12_000)
    row = asked(timed_out(), log, FINISHED, evidence=[seen("B", 1, True)],
                spec=Step("B", ("resume", "ask", "close"), expect="undelivered"))
    assert row.timed.startswith("no answer within 20 s; the session's log has the answer at +12.0 s — a race")
    early = msgspec.structs.replace(answered_in_the_log(RECALLED), last_reply_ms=9_999)
    row = asked(timed_out(), early, FINISHED, evidence=[seen("B", 1, True)],
                spec=Step("B", ("resume", "ask", "close"), expect="undelivered"))
    assert "race" not in row.timed


def test_a_failed_turn_that_timed_out_with_nothing_in_the_log_says_only_its_time_out():
    row = asked(timed_out(15.0), eventlog(True), FINISHED, evidence=[seen("B", 1, True)],
                spec=Step("B", ("resume", "ask", "close"), expect="failed-loudly"))
    assert (row.verdict, row.timed) == ("failed-loudly", "no answer within 15 s")


def test_a_turn_that_failed_otherwise_did_not_rest_on_a_time_out():
    row = asked(error("ask", "Execution failed: something else"), FINISHED)
    assert row.timed is None and cells.verdict(row) == "failed-loudly"


def test_undelivered_needs_the_wire_to_agree():
    row = asked(error("ask", TIMEOUT), answered_in_the_log(RECALLED), FINISHED, evidence=[seen("B", 1, False)])
    assert row.verdict == "unknown"
    assert "never delivered" in row.reason


def test_a_log_whose_last_prompt_is_another_question_is_not_this_turn_s_answer():
    row = asked(error("ask", TIMEOUT), answered_in_the_log(RECALLED, prompt="something else"), FINISHED,
                evidence=[seen("B", 1, True)])
    assert (row.verdict, row.evidence) == ("failed-loudly", "runtime error")


def test_an_answer_in_the_log_without_the_fact_is_lost_and_says_it_was_never_delivered():
    row = asked(error("ask", TIMEOUT), answered_in_the_log(NOT_KNOWN), FINISHED, evidence=[seen("B", 1, False)])
    assert (row.verdict, row.evidence) == ("lost", "log + wire")
    assert "never delivered" in row.reason


def test_a_step_on_another_version_than_it_asks_for_measures_nothing():
    spec = Step("B", ("resume", "ask", "close"), expect="kept", runtime="1.0.92", sdk="1.0.24")
    row = asked(turn(1, "ask", RECALLED), FINISHED, evidence=[seen("B", 1, True)], spec=spec)
    assert (row.verdict, row.as_expected) == ("unknown", None)
    assert "asked for runtime 1.0.92, ran 1.0.102; asked for SDK 1.0.24, ran 1.0.25" in row.reason
    right = msgspec.structs.replace(READY, runtime_version="1.0.92", sdk_version="1.0.24")
    teller = ran("A", READY, turn(1, "tell", "OK"), FINISHED)
    *_, good = rows([TELLER, spec], [teller, ran("B", right, turn(1, "ask", RECALLED), FINISHED)],
                    [seen("A", 1, True), seen("B", 1, True)])
    assert (good.verdict, cells.ran_in(good.step)) == ("kept", "B pid 41@h, runtime 1.0.92, SDK 1.0.24")


def test_a_worker_that_refused_a_substituted_runtime_is_unknown_with_its_words():
    message = "asked for runtime 1.0.92, the runtime reports 1.0.102"
    row = asked(error("start", message), Skipped(t=0.0, action="ask", reason="not the runtime"), FINISHED)
    assert row.verdict == "unknown" and message in row.reason


def test_a_resume_that_skipped_events_is_shown_and_can_be_expected():
    spec = Step("B", ("resume", "ask", "close"), expect="kept", loaded_all_events=False)
    skipped = msgspec.structs.replace(eventlog(True), events_before_resume=8, resume_event_count=7)
    row = asked(turn(1, "ask", RECALLED), skipped, FINISHED, evidence=[seen("B", 1, True)], spec=spec)
    assert (row.verdict, row.as_expected, cells.expected(row)) == ("kept", True, "kept, events skipped")
    assert "the resume loaded 7 of the 8 events in the log" in row.reason
    assert cells.event_log(row) == "resume loaded 7 of 8 events"
    complete = msgspec.structs.replace(skipped, resume_event_count=8)
    row = asked(turn(1, "ask", RECALLED), complete, FINISHED, evidence=[seen("B", 1, True)], spec=spec)
    assert row.as_expected is False  # it loaded everything: not what the scenario says


@pytest.mark.parametrize("message", [
    "Failed to read JSONL from /state/events.jsonl: UNKNOWN: the session store at 127.0.0.1:5432 is unreachable: x",
    "Failed to load session events: Session not found: s (the session store at h:1 is unreachable)",
    "Failed to persist session events: UNKNOWN: the connection is closed",
])
def test_a_store_that_could_not_be_reached_is_an_outage_never_a_lost_session(message):
    row = asked(error("resume", message), FINISHED, spec=Step("B", ("resume", "ask", "close"), expect="failed-loudly"))
    assert (row.verdict, row.evidence, row.as_expected) == ("failed-loudly", "runtime error", True)
    assert "the store was out" in row.reason
