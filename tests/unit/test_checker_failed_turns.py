"""The checker on turns that did not answer, compared whole (as in test_checker_paths.py):
an ask whose answer reached the session's log but not the app, a failed ask before an
answered one, a failure of another action first, a worker that died in its tell or was
killed in its ask, a resume that skipped events, where a turn with no number goes, and
what the event log's report keeps for these judgements."""

from __future__ import annotations

import json

import pytest

from handoff.checker.checks import judge_scenario
from handoff.checker.verdicts import Basis, Expectation, FactSeen, TurnJudgement
from handoff.eventlog import report
from handoff.protocol import ActionFailed, EventLog
from handoff.runs.record import FaultRecord, ScenarioRecord
from handoff.scenario import Step
from handoff.words import Verdict

from tests.unit.test_checker_paths import COPILOT, FACT, FINISHED, READY, RECALLED, facts, scenario, seen, step, turn

TIMEOUT = "Timeout after 20s waiting for session.idle"
FAILED_ASK = ActionFailed(t=0.0, action="ask", message=TIMEOUT, turn=1)


def answered_log(reply: str) -> EventLog:
    """A resumed session's log whose last question is the fact's, with ``reply`` after it."""
    return EventLog(t=0.0, session_id="sid", found=True, events=8, starts=1, resumes=1, closed_before_resume=True,
                    resume_event_count=7, already_in_use=False, branch_points=0, last_prompt=FACT.question_prompt,
                    last_reply=reply)


def test_an_ask_whose_answer_reached_the_log_but_never_the_app_is_undelivered():
    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, FAILED_ASK, answered_log(RECALLED), FINISHED)],
                            [seen("B", 1, True)])
    assert judge_scenario(record, FACT).turns == (TurnJudgement(
        "s", "ask", 1, facts("B", eventlog=answered_log(RECALLED), failures=(FAILED_ASK,)), answer=None,
        fact_reached_model=FactSeen.YES, verdict=Verdict.UNDELIVERED,
        reason=f"answer in the log, never delivered to the app: the session's log holds the answer {RECALLED!r}, "
               f"but the app got: {TIMEOUT}",
        evidence=Basis.LOG_AND_WIRE, expectations=(Expectation("verdict", "undelivered", "undelivered", True),),
        session="sid"),)


def test_a_failed_ask_before_an_answered_one_failed_loudly_the_logs_answer_being_the_later_ones():
    spec = Step("B", ("resume", "ask", "ask", "close"), expect=("failed-loudly", "kept"))
    record = ScenarioRecord("s", scenario(spec),
                            [step("B", READY, FAILED_ASK, turn(2, "ask", RECALLED), answered_log(RECALLED), FINISHED)],
                            [seen("B", 1, True), seen("B", 2, True)])
    both = facts("B", eventlog=answered_log(RECALLED), failures=(FAILED_ASK,))
    assert judge_scenario(record, FACT).turns == (
        TurnJudgement("s", "ask", 1, both, answer=None, fact_reached_model=FactSeen.NO_REQUEST,
                      verdict=Verdict.FAILED_LOUDLY, reason=f"ask failed (not a 'not found'): {TIMEOUT}",
                      evidence=Basis.RUNTIME_ERROR,
                      expectations=(Expectation("verdict", "failed-loudly", "failed-loudly", True),), session="sid"),
        TurnJudgement("s", "ask", 2, both, answer=RECALLED, fact_reached_model=FactSeen.YES, verdict=Verdict.KEPT,
                      reason="answer names the fact and the model was sent it", evidence=Basis.ANSWER_AND_WIRE,
                      expectations=(Expectation("verdict", "kept", "kept", True),), session="sid"))


def test_an_ask_that_failed_after_its_own_answer_was_reported_is_not_undelivered():
    """The Python worker reports a turn's answer before any after-turn hold, so an ask can
    be both answered and failed under one number (the hold's own read failed): the log's
    last answer is then the one the app got, never one it was not told."""
    spec = Step("B", ("resume", "ask", "close"), expect="kept")
    failed = ActionFailed(t=0.0, action="ask", message="boom", turn=1)
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), failed,
                                                       answered_log(RECALLED), FINISHED)], [seen("B", 1, True)])
    answered, failure = judge_scenario(record, FACT).turns
    assert (answered.turn, answered.answer, answered.verdict) == (1, RECALLED, Verdict.KEPT)
    assert (failure.turn, failure.answer, failure.verdict, failure.reason, failure.evidence) == (
        1, None, Verdict.FAILED_LOUDLY, "ask failed (not a 'not found'): boom", Basis.RUNTIME_ERROR)


def test_a_failed_ask_after_another_actions_failure_keeps_its_own_number():
    spec = Step("B", ("resume", "metadata", "ask", "close"), expect="failed-loudly")
    failures = (ActionFailed(t=0.0, action="metadata", message="no metadata"),
                ActionFailed(t=0.0, action="ask", message="boom", turn=1))
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, *failures, FINISHED)], [seen("B", 1, True)])
    assert judge_scenario(record, FACT).turns == (TurnJudgement(
        "s", "ask", 1, facts("B", failures=failures), answer=None, fact_reached_model=FactSeen.NO_REQUEST,
        verdict=Verdict.FAILED_LOUDLY, reason="ask failed (not a 'not found'): boom", evidence=Basis.RUNTIME_ERROR,
        expectations=(Expectation("verdict", "failed-loudly", "failed-loudly", True),), session="sid"),)


def test_a_worker_that_died_in_its_tell_leaves_a_tell_nobody_heard_the_end_of():
    spec = Step("A", ("create", "tell", "close"))
    record = ScenarioRecord("s", scenario(spec), [step("A", READY, exit_code=1,
                                                       stderr_tail="Traceback\nValueError: x\n")])
    assert judge_scenario(record, FACT).turns == (TurnJudgement(
        "s", "tell", None, facts("A", finished=False, exit_code=1), answer=None, fact_reached_model=FactSeen.NO_REQUEST,
        verdict=Verdict.UNKNOWN, reason="worker ended without 'finished' (exit code 1): ValueError: x",
        evidence=Basis.NOTHING, expectations=(Expectation("tell", "told", "unknown", None),), session=None),)


def test_an_ask_that_never_happened_takes_the_first_verdict_its_step_lists():
    spec = Step("B", ("resume", "ask"), expect=("kept",))
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, FINISHED)])
    [judged] = judge_scenario(record, FACT).turns
    assert (judged.turn, judged.verdict, judged.reason) == (None, Verdict.UNKNOWN, "the ask turn produced no answer")
    assert judged.expectations == (Expectation("verdict", "kept", "unknown", None),)


@pytest.mark.parametrize("tells", [1, 61])
def test_a_turn_with_no_number_comes_after_every_numbered_one(tells):
    spec = Step("A", ("create",) + ("tell",) * tells + ("ask",), expect="kept")
    record = ScenarioRecord("s", scenario(spec), [step("A", READY, *(turn(n, "tell", "OK") for n in range(1, tells + 1)),
                                                       FINISHED)], [seen("A", n, True) for n in range(1, tells + 1)])
    order = [(t.kind, t.turn) for t in judge_scenario(record, FACT).turns]
    assert order == [("tell", n) for n in range(1, tells + 1)] + [("ask", None)]


AUTH = "Authentication failed (HTTP 401)"
ADVICE = ("the GitHub Copilot service refused the token from $GH_TOKEN (HTTP 401): set COPILOT_GITHUB_TOKEN "
          "(or GH_TOKEN / GITHUB_TOKEN)")


def test_a_numbered_failed_ask_is_explained_by_the_backend():
    spec = Step("B", ("resume", "ask", "ask"), expect=("failed-loudly", "kept"))
    failure = ActionFailed(t=0.0, action="ask", message=AUTH, turn=1)
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, failure, turn(2, "ask", RECALLED), FINISHED)])
    first = judge_scenario(record, FACT, COPILOT).turns[0]
    assert (first.turn, first.verdict) == (1, Verdict.FAILED_LOUDLY)
    assert first.reason.startswith(f"ask failed (not a 'not found'): {AUTH} ({ADVICE}")


def test_a_worker_that_died_after_its_create_failed_says_why_with_the_backends_advice():
    spec = Step("A", ("create", "tell", "close"))
    failure = ActionFailed(t=0.0, action="create", message=AUTH)
    record = ScenarioRecord("s", scenario(spec), [step("A", READY, failure, exit_code=1)])
    [told] = judge_scenario(record, FACT, COPILOT).turns
    assert (told.kind, told.turn, told.verdict) == ("tell", None, Verdict.FAILED_LOUDLY)
    assert told.reason.startswith(f"create failed (not a 'not found'): {AUTH} ({ADVICE}")


def test_an_ask_killed_on_purpose_names_every_kill_and_only_the_kills():
    spec = Step("B", ("resume", "ask"), expect="kept")
    faults = [FaultRecord("store-outage", "before-step", 0.5), FaultRecord("kill", "mid-turn", 1.0, detail="SIGKILL"),
              FaultRecord("kill", "after-turn", 1.5), FaultRecord("kill-runtime", "after-turn", 1.6)]
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, exit_code=-9, faults=faults)])
    [judged] = judge_scenario(record, FACT).turns
    assert (judged.turn, judged.verdict, judged.reason) == (
        None, Verdict.UNKNOWN, "the worker was killed on purpose (kill at mid-turn, kill at after-turn, kill-runtime at "
                               "after-turn) before it could answer")


def test_a_resume_that_skipped_events_says_how_many_and_meets_or_misses_its_expectation():
    skipped = EventLog(t=0.0, session_id="sid", found=True, events=8, starts=1, resumes=1, closed_before_resume=True,
                       resume_event_count=7, already_in_use=False, branch_points=0, events_before_resume=8)
    for wanted, met in ((True, False), (False, True)):
        spec = Step("B", ("resume", "ask"), expect="kept", loaded_all_events=wanted)
        record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), skipped, FINISHED)],
                                [seen("B", 1, True)])
        [judged] = judge_scenario(record, FACT).turns
        assert judged.reason == ("answer names the fact and the model was sent it; the resume loaded 7 of the 8 "
                                 "events in the log")
        assert judged.expectations == (
            Expectation("verdict", "kept", "kept", True),
            Expectation("loaded all events", "all events loaded" if wanted else "events skipped", "events skipped",
                        met))


def test_an_unnumbered_failed_ask_found_in_the_log_is_numbered_after_the_turns_before_it():
    spec = Step("B", ("resume", "tell", "ask"), expect="undelivered")
    unnumbered = ActionFailed(t=0.0, action="ask", message=TIMEOUT)
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "tell", "OK"), unnumbered,
                                                       answered_log(RECALLED), FINISHED)],
                            [seen("B", 1, True), seen("B", 2, True)])
    told, asked = judge_scenario(record, FACT).turns
    assert (told.kind, told.turn) == ("tell", 1)
    assert (asked.kind, asked.turn, asked.verdict, asked.fact_reached_model) == ("ask", 2, Verdict.UNDELIVERED,
                                                                                 FactSeen.YES)


def test_a_concurrent_resume_that_never_answered_is_one_unknown_ask():
    spec = Step("B", ("concurrent-resume-and-ask",), expect="kept")
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, FINISHED)])
    [asked] = judge_scenario(record, FACT).turns
    assert (asked.kind, asked.turn, asked.verdict, asked.reason) == ("ask", None, Verdict.UNKNOWN,
                                                                     "the ask turn produced no answer")


def test_the_event_log_report_counts_every_message_before_the_resume_and_keeps_the_last_exchange():
    events = [{"id": "1", "type": "session.start"},
              {"id": "2", "parentId": "1", "type": "user.message", "data": {"content": "first"}},
              {"id": "3", "parentId": "2", "type": "assistant.message", "data": {"content": "OK"}},
              {"id": "4", "parentId": "3", "type": "user.message", "data": {"content": "second"}},
              {"id": "5", "parentId": "4", "type": "session.shutdown"},
              {"id": "6", "parentId": "5", "type": "session.resume", "data": {"eventCount": 5}},
              {"id": "7", "parentId": "6", "type": "user.message", "data": {"content": "the question"}},
              {"id": "8", "parentId": "7", "type": "assistant.message", "data": {"content": "the reply"}}]
    reported = report("sid", b"".join(json.dumps(event).encode() + b"\n" for event in events))
    assert (reported.messages_before_resume, reported.last_prompt, reported.last_reply) == (2, "the question",
                                                                                          "the reply")
