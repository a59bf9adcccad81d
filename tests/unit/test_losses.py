"""Silent losses, loud failures and recovery times, judged from records made by hand:
a tell the app saw succeed that a later successful resume does not have is lost
silently (contradicting its scenario unless declared); one the app was told failed is
failed loudly; a failed resume or a session created anew is neither."""

from __future__ import annotations

import msgspec
import pytest

from handoff.checker.checks import judge_scenario
from handoff.checker.verdicts import Basis, Expectation, ExitCode, FactSeen, Recovery, RunJudgement, TurnJudgement
from handoff.protocol import ActionDone, ActionFailed, EventLog, Turn
from handoff.runs.record import FaultRecord, ScenarioRecord
from handoff.scenario import Scenario, Step
from handoff.words import Verdict
from tests.unit.test_checker_paths import FACT, FINISHED, READY, RECALLED, seen, step, turn

FORGOT = "I don't know: nothing in this conversation tells me."
TOLD = Step("A", ("create", "tell", "close"))
RESUMED = Step("B", ("resume", "ask", "close"), expect="lost")


def done(action, t=0.0):
    return ActionDone(t=t, action=action, session_id="sid", ms=1)


def log(messages: int) -> EventLog:
    return EventLog(t=0.0, session_id="sid", found=True, events=3, starts=1, resumes=1, closed_before_resume=True,
                    resume_event_count=3, messages_before_resume=messages)


def told_then(b_events, spec_a=TOLD, spec_b=RESUMED, b_seen=False) -> ScenarioRecord:
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), done("close"), FINISHED)
    b = step("B", READY, *b_events, FINISHED)
    return ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec_a, spec_b)), [a, b],
                          [seen("A", 1, True), seen("B", 1, b_seen)])


def exit_code(record: ScenarioRecord) -> ExitCode:
    return RunJudgement("r", FACT.value, (judge_scenario(record, FACT),)).exit_code()


def test_a_told_turn_a_later_resume_does_not_have_is_lost_silently_and_contradicts():
    record = told_then([done("resume"), turn(1, "ask", FORGOT), log(0), done("close")])
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, tell.evidence, ask.verdict) == (Verdict.LOST_SILENTLY, Basis.ANSWER_AND_WIRE, Verdict.LOST)
    assert tell.expectations == (Expectation("tell", "told", "lost-silently", False),)
    assert tell.reason.startswith("the app was told this turn succeeded (it answered 'OK'); step B resumed")
    assert "the resumed log had 0 user message(s) before its resume" in tell.reason
    assert exit_code(record) == ExitCode.CONTRADICTED


def test_a_declared_silent_loss_is_as_expected():
    declared = Step("A", ("create", "tell", "close"), expect_tell="lost-silently")
    record = told_then([done("resume"), turn(1, "ask", FORGOT), log(0)], spec_a=declared)
    tell, _ = judge_scenario(record, FACT).turns
    assert tell.expectations == (Expectation("tell", "lost-silently", "lost-silently", True),)
    assert exit_code(record) == ExitCode.AS_EXPECTED


def test_a_declared_silent_loss_that_did_not_happen_contradicts():
    declared = Step("A", ("create", "tell", "close"), expect_tell="lost-silently")
    kept = Step("B", ("resume", "ask", "close"), expect="kept")
    record = told_then([done("resume"), turn(1, "ask", RECALLED), log(1)], spec_a=declared, spec_b=kept, b_seen=True)
    tell, _ = judge_scenario(record, FACT).turns
    assert tell.verdict is None and tell.expectations == (Expectation("tell", "lost-silently", "told", False),)
    assert exit_code(record) == ExitCode.CONTRADICTED


def test_a_failed_resume_is_not_a_silent_loss():
    record = told_then([ActionFailed(t=0.0, action="resume", message="Session not found: sid")])
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, tell.expectations, ask.verdict) == (None, (), Verdict.LOST)


def test_a_session_created_anew_under_the_same_id_is_not_a_silent_loss():
    again = Step("B", ("create", "ask", "close"), expect="lost")
    record = told_then([done("create"), turn(1, "ask", FORGOT)], spec_b=again)
    tell, _ = judge_scenario(record, FACT).turns
    assert tell.verdict is None


def test_a_log_short_of_the_turns_the_app_saw_loses_the_last_ones_silently():
    twice = Step("A", ("create", "tell", "tell", "close"))
    kept = Step("B", ("resume", "ask", "close"), expect="kept")
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), turn(2, "tell", "OK"), FINISHED)
    b = step("B", READY, done("resume"), turn(1, "ask", RECALLED), log(1), FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (twice, kept)), [a, b],
                            [seen("A", 1, True), seen("A", 2, True), seen("B", 1, True)])
    first, second, ask = judge_scenario(record, FACT).turns
    assert (first.verdict, second.verdict, ask.verdict) == (None, Verdict.LOST_SILENTLY, Verdict.KEPT)
    assert second.evidence == Basis.EVENT_LOG
    assert second.reason == ("the app saw 2 turn(s) of this session succeed, but the log step B resumed had 1 user "
                             "message(s) before its resume: the last 1 are missing")


@pytest.mark.parametrize("action", ["tell", "look-up"])  # a look-up tells the fact through a tool
def test_a_tell_the_app_was_told_failed_is_failed_loudly_and_unjudged_unless_declared(action):
    failed = ActionFailed(t=0.0, action=action, message="Failed to persist session events", turn=1)
    for declared, code in ((None, ExitCode.UNJUDGED), ("failed-loudly", ExitCode.AS_EXPECTED)):
        spec = Step("A", ("create", action, "close"), expect_tell=declared)
        record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)),
                                [step("A", READY, done("create"), failed, FINISHED)])
        [tell] = judge_scenario(record, FACT).turns
        assert (tell.kind, tell.turn, tell.verdict, tell.evidence) == ("tell", 1, Verdict.FAILED_LOUDLY,
                                                                       Basis.RUNTIME_ERROR)
        assert tell.reason == "tell failed: Failed to persist session events"
        assert exit_code(record) == code


def test_each_ask_takes_the_verdict_expected_of_its_place_in_the_step():
    spec = Step("A", ("create", "tell", "ask", "restart-runtime", "resume", "ask", "close"),
                expect=("failed-loudly", "kept"))
    failed = ActionFailed(t=0.0, action="ask", message="Timeout after 60.0s waiting for response completion", turn=2)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)),
                            [step("A", READY, done("create"), turn(1, "tell", "OK"), failed, done("restart-runtime"),
                                  done("resume"), turn(3, "ask", RECALLED), FINISHED)],
                            [seen("A", 1, True), seen("A", 3, True)])
    _, first, second = judge_scenario(record, FACT).turns
    assert (first.turn, first.verdict, first.expectations[0].met) == (2, Verdict.FAILED_LOUDLY, True)
    assert (second.turn, second.verdict, second.expectations[0].met) == (3, Verdict.KEPT, True)


def _outage_then(action: str) -> tuple[ScenarioRecord, ScenarioRecord]:
    """B1's resume fails in a store outage healed at 100 s; B2 reports ``action`` at 103.5 s
    (and, second, the scenario of B1 alone)."""
    outage = FaultRecord("store-outage", "before-step", injected_at=90.0, healed_at=100.0)
    b1 = step("B1", READY, ActionFailed(t=95.0, action="resume", message="connection refused"), FINISHED,
              faults=[outage])
    b2 = step("B2", READY, done(action, t=103.5), turn(1, "ask", RECALLED), FINISHED)
    specs = (Step("B1", ("resume", "ask"), expect="failed-loudly"), Step("B2", ("resume", "ask"), expect="kept"))
    return (ScenarioRecord("s", Scenario("s", "T", "P", "D", specs), [b1, b2], [seen("B2", 1, True)]),
            ScenarioRecord("s", Scenario("s", "T", "P", "D", specs[:1]), [b1]))


def test_recovery_is_the_time_from_a_heal_to_the_next_successful_resume():
    record, never = _outage_then("resume")
    assert judge_scenario(record, FACT).recoveries == (Recovery("store-outage", "B1", 3.5),)
    assert judge_scenario(never, FACT).recoveries == (Recovery("store-outage", "B1", None),)


def test_every_turn_of_a_step_that_failed_some_is_judged_whole():
    """Told, failed loudly, refused and answered turns of one step, each a row of its own in
    turn order, each with the expectation its place gives it."""
    spec = Step("A", ("create", "tell", "tell", "ask", "ask", "ask", "close"), expect=("failed-loudly", "kept"))
    failed_tell = ActionFailed(t=0.0, action="tell", message="disk full", turn=2)
    failed_ask = ActionFailed(t=0.0, action="ask", message="Execution failed: boom", turn=3)
    refused_ask = ActionFailed(t=0.0, action="ask", message="not yours", refused=True, turn=5)
    not_a_turn = ActionFailed(t=0.0, action="metadata", message="Session not found: sid")
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), failed_tell, failed_ask, turn(4, "ask", RECALLED),
             refused_ask, not_a_turn, FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)), [a],
                            [seen("A", 1, True), seen("A", 4, True)])
    rows = judge_scenario(record, FACT).turns
    facts = rows[0].step
    assert [(r.kind, r.turn) for r in rows] == [("tell", 1), ("tell", 2), ("ask", 3), ("ask", 4)]
    told, loud_tell, loud_ask, kept = rows
    assert told == TurnJudgement("s", "tell", 1, facts, answer="OK", fact_reached_model=FactSeen.YES, session="sid")
    assert loud_tell == TurnJudgement(
        "s", "tell", 2, facts, fact_reached_model=FactSeen.NO_REQUEST, verdict=Verdict.FAILED_LOUDLY,
        reason="tell failed: disk full", evidence=Basis.RUNTIME_ERROR, session="sid",
        expectations=(Expectation("tell", "told", "failed-loudly", None),))
    assert loud_ask == TurnJudgement(
        "s", "ask", 3, facts, fact_reached_model=FactSeen.NO_REQUEST, verdict=Verdict.FAILED_LOUDLY,
        reason="ask failed (not a 'not found'): Execution failed: boom", evidence=Basis.RUNTIME_ERROR, session="sid",
        expectations=(Expectation("verdict", "failed-loudly", "failed-loudly", True),))
    assert kept == TurnJudgement(
        "s", "ask", 4, facts, answer=RECALLED, fact_reached_model=FactSeen.YES, verdict=Verdict.KEPT,
        reason="answer names the fact and the model was sent it", evidence=Basis.ANSWER_AND_WIRE, session="sid",
        expectations=(Expectation("verdict", "kept", "kept", True),))
    assert facts.failures == (failed_tell, failed_ask, refused_ask, not_a_turn)


def test_the_reason_of_a_silent_loss_says_what_the_app_was_told_and_what_the_resume_found():
    record = told_then([done("resume"), turn(1, "ask", FORGOT), msgspec.structs.replace(log(0), unreadable_lines=2)])
    tell, _ = judge_scenario(record, FACT).turns
    assert tell.reason == ("the app was told this turn succeeded (it answered 'OK'); step B resumed the session and "
                           "turn 2 was answered without the fact (answer lacks the fact and the model was not sent "
                           "it); the resumed log had 0 user message(s) before its resume and 2 unreadable line(s)")
    quiet = told_then([done("resume"), turn(1, "ask", FORGOT)])  # no event log reported
    assert judge_scenario(quiet, FACT).turns[0].reason == (
        "the app was told this turn succeeded (it answered 'OK'); step B resumed the session and turn 2 was answered "
        "without the fact (answer lacks the fact and the model was not sent it)")


def test_a_loss_counts_only_tells_the_model_was_sent_in_the_same_session_after_a_resume_of_it():
    other = Turn(t=0.0, turn=1, kind="ask", session_id="another", prompt="p", answer=FORGOT, ms=1)
    resumed_other = ActionDone(t=0.0, action="resume", session_id="another", ms=1)
    record = told_then([resumed_other, other])
    assert judge_scenario(record, FACT).turns[0].verdict is None  # another session lost it: not this one
    unsent = told_then([done("resume"), turn(1, "ask", FORGOT)])
    unsent.evidence[0] = seen("A", 1, False)  # the tell never reached the model
    assert judge_scenario(unsent, FACT).turns[0].verdict is None
    answered_twice = told_then([done("resume"), turn(1, "ask", FORGOT), turn(2, "ask", FORGOT), log(0)],
                               spec_b=Step("B", ("resume", "ask", "ask", "close"), expect="lost"))
    answered_twice.evidence.append(seen("B", 2, False))
    rows = judge_scenario(answered_twice, FACT).turns
    assert [r.verdict for r in rows] == [Verdict.LOST_SILENTLY, Verdict.LOST, Verdict.LOST]
    assert "turn 2 was answered" in rows[0].reason  # the first finder names it


def test_a_log_short_of_turns_names_only_the_last_ones_and_never_an_ask():
    kept = Step("B", ("resume", "ask", "close"), expect="kept")
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), turn(2, "ask", RECALLED), turn(3, "tell", "OK"),
             FINISHED)
    b = step("B", READY, done("resume"), turn(1, "ask", RECALLED), log(1), FINISHED)
    spec_a = Step("A", ("create", "tell", "ask", "tell", "close"), expect="kept")
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec_a, kept)), [a, b],
                            [seen("A", 1, True), seen("A", 2, True), seen("A", 3, True), seen("B", 1, True)])
    rows = judge_scenario(record, FACT).turns
    assert [(r.kind, r.verdict) for r in rows] == [("tell", None), ("ask", Verdict.KEPT),
                                                  ("tell", Verdict.LOST_SILENTLY), ("ask", Verdict.KEPT)]
    assert rows[2].reason.startswith("the app saw 3 turn(s) of this session succeed, but the log step B resumed had "
                                     "1 user message(s) before its resume: the last 2 are missing")
    not_resumed = step("B", READY, done("create"), turn(1, "ask", RECALLED), log(0), FINISHED)
    record.steps[1] = not_resumed
    assert all(r.verdict != Verdict.LOST_SILENTLY for r in judge_scenario(record, FACT).turns)


def test_a_silent_loss_of_a_tell_answered_with_nothing_says_no_answer_and_no_unreadable_lines():
    a = step("A", READY, done("create"), turn(1, "tell", ""), done("close"), FINISHED)
    b = step("B", READY, done("resume"), turn(1, "ask", FORGOT), log(0), FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (TOLD, RESUMED)), [a, b],
                            [seen("A", 1, True), seen("B", 1, False)])
    assert judge_scenario(record, FACT).turns[0].reason == (
        "the app was told this turn succeeded; step B resumed the session and turn 2 was answered without the fact "
        "(answer lacks the fact and the model was not sent it); the resumed log had 0 user message(s) before its "
        "resume")


def _three_tells(log_messages: int, expect_tell: str | None = None, a_log: bool = False, full_b1: bool = False):
    """A tells three times; B resumes with a log of ``log_messages`` user messages. With
    ``a_log``, A reports a log too (it created the session: not a resume); with
    ``full_b1``, a step B1 resumes first with a log that holds all three."""
    spec_a = Step("A", ("create", "tell", "tell", "tell", "close"), expect_tell=expect_tell)
    a = step("A", READY, done("create"), *(turn(n, "tell", "OK") for n in (1, 2, 3)), *([log(0)] if a_log else []),
             FINISHED)
    specs, steps = [spec_a], [a]
    if full_b1:
        specs.append(Step("B1", ("resume", "ask"), expect="kept"))
        steps.append(step("B1", READY, done("resume"), turn(1, "ask", RECALLED), log(3), FINISHED))
    specs.append(Step("B", ("resume", "ask"), expect="kept"))
    steps.append(step("B", READY, done("resume"), turn(1, "ask", RECALLED), log(log_messages), FINISHED))
    evidence = [seen("A", n, True) for n in (1, 2, 3)] + [seen(s.step, 1, True) for s in steps[1:]]
    return ScenarioRecord("s", Scenario("s", "T", "P", "D", tuple(specs)), steps, evidence)


def _tell_verdicts(record: ScenarioRecord) -> list:
    return [t.verdict for t in judge_scenario(record, FACT).turns if t.kind == "tell"]


def test_a_log_one_message_short_loses_only_the_last_tell():
    assert _tell_verdicts(_three_tells(2)) == [None, None, Verdict.LOST_SILENTLY]


def test_a_step_that_created_the_session_or_had_its_log_in_full_does_not_end_the_count():
    assert _tell_verdicts(_three_tells(2, a_log=True)) == [None, None, Verdict.LOST_SILENTLY]
    assert _tell_verdicts(_three_tells(2, full_b1=True)) == [None, None, Verdict.LOST_SILENTLY]


def test_a_declared_loss_the_log_count_finds_is_as_expected():
    [*_, last] = [t for t in judge_scenario(_three_tells(2, expect_tell="lost-silently"), FACT).turns
                  if t.kind == "tell"]
    assert (last.verdict, last.expectations) == (Verdict.LOST_SILENTLY,
                                                (Expectation("tell", "lost-silently", "lost-silently", True),))


def test_an_ask_that_failed_is_not_a_turn_the_app_saw_succeed():
    spec_a = Step("A", ("create", "tell", "ask", "tell", "close"), expect="failed-loudly")
    failed = ActionFailed(t=0.0, action="ask", message="Timeout", turn=2)
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), failed, turn(3, "tell", "OK"), FINISHED)
    b = step("B", READY, done("resume"), turn(1, "ask", RECALLED), log(2), FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec_a, Step("B", ("resume", "ask"), expect="kept"))),
                            [a, b], [seen("A", 1, True), seen("A", 3, True), seen("B", 1, True)])
    assert _tell_verdicts(record) == [None, None]  # two tells the app saw succeed, two messages in the log


def test_recovery_skips_a_fault_that_never_healed_and_counts_a_resume_at_the_heal_itself():
    unhealed = FaultRecord("partition", "before-step", injected_at=80.0)
    outage = FaultRecord("store-outage", "before-step", injected_at=90.0, healed_at=100.0)
    b1 = step("B1", READY, ActionFailed(t=95.0, action="resume", message="connection refused"), FINISHED,
              faults=[unhealed, outage])
    specs = (Step("B1", ("resume", "ask"), expect="failed-loudly"), Step("B2", ("resume", "ask"), expect="kept"))
    for resumed_at, seconds in ((100.0, 0.0), (103.12345, 3.123)):
        b2 = step("B2", READY, done("resume", t=resumed_at), turn(1, "ask", RECALLED), FINISHED)
        record = ScenarioRecord("s", Scenario("s", "T", "P", "D", specs), [b1, b2], [seen("B2", 1, True)])
        assert judge_scenario(record, FACT).recoveries == (Recovery("store-outage", "B1", seconds),)


def test_a_step_that_tells_and_later_asks_itself_judges_its_own_ask_not_its_tell():
    """One step creates, tells, closes, resumes and asks: an ask lost there is that step's
    own verdict (declared with expect), not a silent loss of its tell; what the app saw
    fail, it saw in the same step. Only a later step's resume makes an earlier tell lost."""
    spec = Step("P", ("create", "tell", "close", "resume", "ask", "close"), expect="lost")
    p = step("P", READY, done("create"), turn(1, "tell", "OK"), done("close"), done("resume"),
             turn(2, "ask", FORGOT), log(0), done("close"), FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)), [p], [seen("P", 1, True), seen("P", 2, False)])
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, ask.verdict) == (None, Verdict.LOST)
    assert exit_code(record) == ExitCode.AS_EXPECTED


def test_a_step_that_resumed_another_session_and_made_this_one_anew_loses_nothing_silently():
    """The resume that makes a lost ask a finder must be of the ask's own session: B
    resumes another session, then creates this one's id anew and asks there."""
    other = ActionDone(t=0.0, action="resume", session_id="another", ms=1)
    spec = Step("B", ("resume", "create", "ask", "close"), expect="lost")
    record = told_then([other, done("create"), turn(1, "ask", FORGOT), log(0)], spec_b=spec)
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, ask.verdict) == (None, Verdict.LOST)


@pytest.mark.parametrize("told_in, resumed, asked_in", [("sid", "SID", "SID"), ("SID", "sid", "SID")])
def test_an_id_differing_only_in_case_is_another_session_for_both_loss_rules(told_in, resumed, asked_in):
    """Ids are compared as written: a resume, an ask or a log of "SID" says nothing of
    the session "sid", for the rule of a lost ask and for the rule of a short log alike."""
    a = step("A", READY, ActionDone(t=0.0, action="create", session_id=told_in, ms=1),
             Turn(t=0.0, turn=1, kind="tell", session_id=told_in, prompt="p", answer="OK", ms=1), FINISHED)
    short_log = EventLog(t=0.0, session_id=asked_in, found=True, events=3, starts=1, resumes=1,
                         closed_before_resume=True, resume_event_count=3, messages_before_resume=0)
    b = step("B", READY, ActionDone(t=0.0, action="resume", session_id=resumed, ms=1),
             Turn(t=0.0, turn=1, kind="ask", session_id=asked_in, prompt="p", answer=FORGOT, ms=1), short_log,
             FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (TOLD, RESUMED)), [a, b],
                            [seen("A", 1, True), seen("B", 1, False)])
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, ask.verdict) == (None, Verdict.LOST)


def test_an_action_named_in_another_case_is_no_resume_for_any_rule():
    """Actions are the protocol's words as written: "RESUME" is none a worker reports, so
    it neither makes a lost ask a finder, nor a short log a resumed one, nor a recovery."""
    record = told_then([done("RESUME"), turn(1, "ask", FORGOT), log(0)])
    assert judge_scenario(record, FACT).turns[0].verdict is None
    record, _ = _outage_then("Resume")
    assert judge_scenario(record, FACT).recoveries == (Recovery("store-outage", "B1", None),)


def test_an_ask_the_app_was_told_failed_after_a_resume_finds_no_silent_loss():
    """The app that heard its ask fail ("not found") was told: the tell it lost is no
    silent loss, whatever verdict that ask takes."""
    failed = ActionFailed(t=0.0, action="ask", message="Session not found: sid", turn=1)
    record = told_then([done("resume"), failed])
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, ask.verdict, ask.evidence) == (None, Verdict.LOST, Basis.RUNTIME_ERROR)


def test_turns_that_name_no_session_find_no_silent_loss():
    """A worker that reports no session id for its resume, its ask and the tell before
    says nothing of one session: the ask lost there finds no tell lost with it."""
    a = step("A", READY, ActionDone(t=0.0, action="create", session_id=None, ms=1),
             Turn(t=0.0, turn=1, kind="tell", session_id=None, prompt="p", answer="OK", ms=1), FINISHED)
    b = step("B", READY, ActionDone(t=0.0, action="resume", session_id=None, ms=1),
             Turn(t=0.0, turn=1, kind="ask", session_id=None, prompt="p", answer=FORGOT, ms=1), FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (TOLD, RESUMED)), [a, b],
                            [seen("A", 1, True), seen("B", 1, False)])
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, ask.verdict) == (None, Verdict.LOST)


def test_a_stored_tell_expectation_in_another_case_is_not_met():
    """A run's stored scenario is read as written: "LOST-SILENTLY" declares no verdict the
    checker gives, so the silent loss it finds does not meet it."""
    from handoff.checker.losses import with_tell_expectation

    lost = TurnJudgement("s", "tell", 1, None, verdict=Verdict.LOST_SILENTLY)
    assert with_tell_expectation(lost, "lost-silently").expectations[0].met is True
    assert with_tell_expectation(lost, "LOST-SILENTLY").expectations[0].met is False


def test_the_reason_of_a_silent_loss_names_no_count_the_log_did_not_give():
    uncounted = EventLog(t=0.0, session_id="sid", found=True, events=3, starts=1, resumes=1,
                         closed_before_resume=True, resume_event_count=3, messages_before_resume=None)
    tell, _ = judge_scenario(told_then([done("resume"), turn(1, "ask", FORGOT), uncounted]), FACT).turns
    assert tell.verdict == Verdict.LOST_SILENTLY and "user message(s)" not in tell.reason
