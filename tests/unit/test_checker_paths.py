"""The checker's every path, compared whole: a judgement must be exactly what the record
says — each field, each expectation, each reason — not merely the right verdict."""

from __future__ import annotations

import pytest

from handoff.checker.checks import judge, judge_answer, judge_scenario
from handoff.checker.verdicts import (Basis, Expectation, ExitCode, FactSeen, RunJudgement, ScenarioJudgement,
                                      StepFacts, TurnJudgement)
from handoff.words import Verdict
from handoff.eventlog import report
from handoff.fact import Fact
from handoff.protocol import ActionFailed, Backend, EventLog, Finished, Holding, Ready, Turn, decode, encode
from handoff.runs.record import FaultRecord, RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Evidence

FACT = Fact()
RECALLED = "Your favourite retail segment is 'At Risk'."
READY = Ready(t=0.0, pid=7, hostname="h", address="10.0.0.2", home="/h", runtime_version="1.0.102",
              sdk_version="1.0.25", runtime_start_ms=5)
FINISHED = Finished(t=0.0, ok=True)
COPILOT = Backend("copilot", "claude-haiku-4.5", token_env="GH_TOKEN")


def lines(*events) -> list[str]:
    return [encode(event).decode().rstrip("\n") for event in events]


def step(name, *events, host="local", home="shared", store="home", **fields) -> StepRecord:
    fields.setdefault("exit_code", 0)
    return StepRecord(name, host, home, store, "sid", lines=lines(*events), **fields)


def facts(name, *, ready=READY, eventlog=None, failures=(), holding=None, faults=(), finished=True, exit_code=0,
          timed_out=False, problems=(), notes=(), host="local", home="shared", store="home", calls=()) -> StepFacts:
    """``calls``: the witness's records of the step's other calls to the service (None: a
    backend it does not stand in front of)."""
    return StepFacts(step=name, host=host, home=home, store=store, ready=ready, eventlog=eventlog, actions=(),
                     failures=tuple(failures), holding=holding, faults=tuple(faults), finished=finished,
                     exit_code=exit_code, timed_out=timed_out, problems=tuple(problems), notes=tuple(notes),
                     calls=calls)


def turn(number, kind, answer):
    return Turn(t=0.0, turn=number, kind=kind, session_id="sid", prompt="p", answer=answer, ms=1)


def seen(name, number, sent):
    return Evidence(0.0, "s", name, "local", str(number), 3, sent, "recalled", "")


def scenario(*steps: Step) -> Scenario:
    return Scenario("s", "Title", "Proves", "Does not prove", steps)


def log(closed: bool | None, forks: int = 0) -> EventLog:
    return EventLog(t=0.0, session_id="sid", found=True, events=8, starts=1, resumes=1, closed_before_resume=closed,
                    resume_event_count=7, already_in_use=False, branch_points=forks)


def test_a_skipped_scenario_is_one_row_that_says_why():
    record = ScenarioRecord("s", scenario(Step("A", ("create",))), seconds=0.5, skipped="no namespaces here")
    assert judge_scenario(record, FACT) == ScenarioJudgement(
        "s", "Title", "Proves", "Does not prove", 0.5,
        (TurnJudgement("s", "scenario", None, None, verdict=Verdict.SKIPPED, reason="no namespaces here",
                       evidence=Basis.NOTHING),),
        skipped="no namespaces here")


def test_a_crashed_scenario_keeps_the_turns_it_ran_then_says_it_crashed():
    spec_a, spec_b = Step("A", ("create", "tell", "close")), Step("B", ("resume", "ask", "close"), expect="kept")
    record = ScenarioRecord("s", scenario(spec_a, spec_b), [step("A", READY, turn(1, "tell", "OK"), FINISHED)],
                            [seen("A", 1, True)], seconds=2.0, crashed="RuntimeError: no host")
    assert judge_scenario(record, FACT) == ScenarioJudgement(
        "s", "Title", "Proves", "Does not prove", 2.0,
        (TurnJudgement("s", "tell", 1, facts("A"), answer="OK", fact_reached_model=FactSeen.YES, session="sid"),
         TurnJudgement("s", "scenario", None, None, verdict=Verdict.CRASHED, reason="RuntimeError: no host",
                       evidence=Basis.NOTHING, expectations=(Expectation("verdict", "", "crashed", None),))),
        crashed="RuntimeError: no host")


def test_turns_are_numbered_across_the_scenario_from_each_steps_plan():
    """A concurrent action takes two turns; a step that failed early still uses up its
    planned numbers, so later steps keep theirs."""
    specs = (Step("A", ("create", "tell", "concurrent-resume-and-ask", "close")),
             Step("B", ("resume", "tell", "close")), Step("C", ("resume", "ask", "close"), expect="kept"))
    record = ScenarioRecord("s", scenario(*specs), [
        step("A", READY, turn(1, "tell", "OK"), turn(2, "ask", RECALLED), turn(3, "tell", "OK"), FINISHED),
        step("B", READY, ActionFailed(t=0.0, action="resume", message="boom"), FINISHED),
        step("C", READY, turn(1, "ask", RECALLED), FINISHED)], [seen("C", 1, True)])
    numbers = [(t.step.step, t.turn, t.kind) for t in judge_scenario(record, FACT).turns]
    assert numbers == [("A", 1, "tell"), ("A", 2, "ask"), ("A", 3, "tell"), ("B", None, "step"), ("C", 5, "ask")]


def test_a_step_killed_on_purpose_is_a_line_of_its_own():
    holding = Holding(t=0.0, session_id="sid", point="inside-write", turn=1, during="append to /state/events.jsonl")
    fault = FaultRecord("kill", "inside-write", 1.0, detail="SIGKILL")
    record = ScenarioRecord("s", scenario(Step("A2", ("resume", "tell"))),
                            [step("A2", READY, holding, exit_code=-9, faults=[fault])])
    [judged] = judge_scenario(record, FACT).turns
    assert judged == TurnJudgement("s", "step", None, facts("A2", holding=holding, faults=(fault,), finished=False,
                                                             exit_code=-9))
    assert judged.step.killed_on_purpose and judged.as_expected is None


def test_a_kept_answer_with_its_fork_and_close_expectations_met():
    spec = Step("B", ("resume", "ask", "close"), expect="kept", forked=True, closed_before_resume=True)
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), log(True, forks=1),
                                                       FINISHED)], [seen("B", 1, True)])
    [judged] = judge_scenario(record, FACT).turns
    assert judged == TurnJudgement(
        "s", "ask", 1, facts("B", eventlog=log(True, forks=1)), answer=RECALLED, fact_reached_model=FactSeen.YES,
        verdict=Verdict.KEPT, reason="answer names the fact and the model was sent it", evidence=Basis.ANSWER_AND_WIRE,
        expectations=(Expectation("verdict", "kept", "kept", True), Expectation("forked", "forked", "forked", True),
                      Expectation("closed before resume", "closed", "closed", True)), session="sid")
    assert judged.as_expected is True


@pytest.mark.parametrize("forks, wanted, got, met", [(0, True, "no fork", False), (1, False, "forked", False),
                                                     (0, False, "no fork", True), (2, True, "forked", True)])
def test_the_fork_expectation_reads_the_logs_branch_points(forks, wanted, got, met):
    spec = Step("B", ("resume", "ask", "close"), expect="kept", forked=wanted)
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), log(True, forks),
                                                       FINISHED)], [seen("B", 1, True)])
    [judged] = judge_scenario(record, FACT).turns
    assert judged.expectations[1] == Expectation("forked", "forked" if wanted else "no fork", got, met)


def test_no_event_log_leaves_the_log_expectations_unjudged_not_contradicted():
    spec = Step("B", ("resume", "ask", "close"), expect="kept", forked=False, closed_before_resume=False)
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), FINISHED)],
                            [seen("B", 1, True)])
    [judged] = judge_scenario(record, FACT).turns
    assert judged.expectations[1:] == (Expectation("forked", "no fork", "—", None),
                                       Expectation("closed before resume", "not closed", "—", None))
    assert judged.as_expected is None and judged.reason == "answer names the fact and the model was sent it"


def test_a_kept_resume_without_a_close_before_it_says_so_and_only_then():
    spec = Step("B", ("resume", "ask", "close"), expect="kept")
    for closed, suffix in ((False, "; but no session.shutdown precedes the resume: not a resume-after-close"),
                           (None, ""), (True, "")):
        record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), log(closed),
                                                           FINISHED)], [seen("B", 1, True)])
        assert judge_scenario(record, FACT).turns[0].reason == "answer names the fact and the model was sent it" + suffix
    lost = ScenarioRecord("s", scenario(Step("B", ("resume", "ask"), expect="lost")),
                          [step("B", READY, turn(1, "ask", "nothing"), log(False), FINISHED)], [seen("B", 1, False)])
    assert judge_scenario(lost, FACT).turns[0].reason == "answer lacks the fact and the model was not sent it"


def test_an_ask_that_never_answered_is_judged_from_the_failure_with_the_backends_advice():
    spec = Step("B", ("resume", "ask", "close"), expect="kept")
    failure = ActionFailed(t=0.0, action="ask", message="Authentication failed (HTTP 401)")
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, failure, FINISHED)])
    [judged] = judge_scenario(record, FACT, COPILOT).turns
    advice = ("the GitHub Copilot service refused the token from $GH_TOKEN (HTTP 401): set COPILOT_GITHUB_TOKEN "
              "(or GH_TOKEN / GITHUB_TOKEN)")
    assert judged.verdict == Verdict.FAILED_LOUDLY and judged.evidence == Basis.RUNTIME_ERROR
    assert judged.reason.startswith(f"ask failed (not a 'not found'): Authentication failed (HTTP 401) ({advice}")
    assert judged == TurnJudgement("s", "ask", None, facts("B", failures=(failure,), calls=None),  # no witness there
                                   fact_reached_model=FactSeen.NO_REQUEST,
                                   verdict=Verdict.FAILED_LOUDLY, reason=judged.reason, evidence=Basis.RUNTIME_ERROR,
                                   expectations=(Expectation("verdict", "kept", "failed-loudly", None),))


@pytest.mark.parametrize("stderr, notes, says", [
    ("", [], "worker ended without 'finished' (exit code -9)"),
    ("first\nsecond\nRuntimeError: boom\n", [], "worker ended without 'finished' (exit code -9): RuntimeError: boom"),
    ("", ["the disk is full", "so is the other"],
     "worker ended without 'finished' (exit code -9); the disk is full; so is the other"),
])
def test_a_worker_that_died_says_its_last_line_and_what_the_driver_saw(stderr, notes, says):
    spec = Step("B", ("resume", "ask"), expect="kept")
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, exit_code=-9, stderr_tail=stderr, notes=notes)])
    assert judge_scenario(record, FACT).turns[0].reason == says


def test_a_failure_the_backend_cannot_explain_is_given_as_it_came():
    spec = Step("B", ("resume", "ask"), expect="kept")
    failure = ActionFailed(t=0.0, action="resume", message="connection reset by peer")
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, failure, FINISHED)])
    assert judge_scenario(record, FACT).turns[0].reason == "resume failed (not a 'not found'): connection reset by peer"


def test_an_ask_nobody_declared_an_expectation_for_expects_nothing():
    record = ScenarioRecord("s", scenario(Step("B", ("resume", "ask"))),
                            [step("B", READY, turn(1, "ask", RECALLED), FINISHED)], [seen("B", 1, True)])
    assert judge_scenario(record, FACT).turns[0].expectations == (Expectation("verdict", "", "kept", False),)


def test_a_finished_worker_that_never_asked_produced_no_answer():
    spec = Step("B", ("resume", "ask"), expect="kept")
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, FINISHED)])
    assert judge_scenario(record, FACT).turns[0].reason == "the ask turn produced no answer"


@pytest.mark.parametrize("answer, records, wire, expected", [
    (RECALLED, [], False, (Verdict.KEPT, "the answer names the value (requests to this model cannot be recorded)",
                           Basis.ANSWER_ONLY)),
    ("no", [], False, (Verdict.LOST, "the answer does not name the value (requests to this model cannot be recorded)",
                       Basis.ANSWER_ONLY)),
    (RECALLED, [], True, (Verdict.UNKNOWN, "the witness model has no record of this turn", Basis.NOTHING)),
    (RECALLED, [None], True, (Verdict.UNKNOWN, "the witness model was not told which fact to look for", Basis.NOTHING)),
    (RECALLED, [True], True, (Verdict.KEPT, "answer names the fact and the model was sent it", Basis.ANSWER_AND_WIRE)),
    ("no", [False], True, (Verdict.LOST, "answer lacks the fact and the model was not sent it", Basis.ANSWER_AND_WIRE)),
    (RECALLED, [False], True, (Verdict.UNKNOWN, "answer names the fact but the model was not sent it",
                               Basis.ANSWER_AND_WIRE)),
    ("no", [True], True, (Verdict.UNKNOWN, "the model was sent the fact but the answer lacks it", Basis.ANSWER_AND_WIRE)),
])
def test_judge_answer_says_exactly_what_it_rests_on(answer, records, wire, expected):
    assert judge_answer(answer, records, FACT, seen_on_the_wire=wire) == expected


def test_a_run_is_judged_with_its_own_fact_topic_and_backend():
    other = Fact("Champions", "customer tier")
    spec = Step("B", ("resume", "ask"), expect="kept")
    record = RunRecord("run-7", "run", 0.0, 1.0, Versions("0", "1", "1", "3", "L", "m", 2),
                       RunOptions(other.value, other.topic, 1, COPILOT),
                       [ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", "Champions, of course"),
                                                                  FINISHED)])])
    judgement = judge(record)
    assert (judgement.run_id, judgement.fact) == ("run-7", "Champions")
    [judged] = judgement.turns
    assert (judged.verdict, judged.evidence, judged.fact_reached_model) == (Verdict.KEPT, Basis.ANSWER_ONLY,
                                                                           FactSeen.NOT_RECORDED)
    # The topic is in the question the checker looks for in a session's log: an ask the app
    # never got an answer to, whose log ends with this run's question and an answer naming
    # its value, is undelivered — with the default topic's question it would fail loudly.
    timed_out = ActionFailed(t=0.0, action="ask", message="Timeout after 20s waiting for session.idle", turn=1)
    logged = EventLog(t=0.0, session_id="sid", found=True, events=4, starts=1, resumes=1, closed_before_resume=True,
                      resume_event_count=3, last_prompt="Which customer tier did I say was my favourite?",
                      last_reply="Champions, of course")
    witnessed = RunRecord("run-8", "run", 0.0, 1.0, Versions("0", "1", "1", "3", "L", "m", 2),
                          RunOptions(other.value, other.topic, 1, Backend()),
                          [ScenarioRecord("s", scenario(Step("B", ("resume", "ask"), expect="undelivered")),
                                          [step("B", READY, timed_out, logged, FINISHED)], [seen("B", 1, True)])])
    [asked] = judge(witnessed).turns
    assert (asked.verdict, asked.evidence, asked.as_expected) == (Verdict.UNDELIVERED, Basis.LOG_AND_WIRE, True)


def _run(*turns: TurnJudgement) -> RunJudgement:
    return RunJudgement("r", "v", (ScenarioJudgement("s", "T", "P", "D", 1.0, turns),))


KEPT = TurnJudgement("s", "ask", 2, None, verdict=Verdict.KEPT, expectations=(Expectation("verdict", "kept", "kept", True),))
UNKNOWN = TurnJudgement("s", "ask", 2, None, verdict=Verdict.UNKNOWN,
                        expectations=(Expectation("verdict", "kept", "unknown", None),))
LOST = TurnJudgement("s", "ask", 2, None, verdict=Verdict.LOST, expectations=(Expectation("verdict", "kept", "lost", False),))
SKIPPED = TurnJudgement("s", "scenario", None, None, verdict=Verdict.SKIPPED)
EXPECTED_UNKNOWN = TurnJudgement("s", "ask", 2, None, verdict=Verdict.UNKNOWN,
                                 expectations=(Expectation("verdict", "unknown", "unknown", True),))


@pytest.mark.parametrize("turns, code", [
    ((KEPT,), ExitCode.AS_EXPECTED),
    ((KEPT, LOST), ExitCode.CONTRADICTED),
    ((KEPT, UNKNOWN), ExitCode.UNJUDGED),  # one unjudged turn is enough, even beside judged ones
    ((LOST, UNKNOWN), ExitCode.CONTRADICTED),
    ((SKIPPED,), ExitCode.UNJUDGED),  # nothing judged at all is not a pass
    ((), ExitCode.UNJUDGED),
    ((EXPECTED_UNKNOWN,), ExitCode.AS_EXPECTED),  # a scenario may declare that it cannot be judged
])
def test_the_exit_code_says_what_to_do(turns, code):
    assert _run(*turns).exit_code() == code


def test_the_event_log_report_carries_every_count():
    events = [{"id": "1", "type": "session.start", "data": {"copilotVersion": "1.0.102"}},
              {"id": "2", "parentId": "1", "type": "user.message"},
              {"id": "3", "parentId": "2", "type": "session.shutdown"},
              {"id": "4", "parentId": "3", "type": "session.resume", "data": {"eventCount": 3, "alreadyInUse": True}},
              {"id": "5", "parentId": "3", "type": "user.message"}]
    import json

    encoded = [json.dumps(event).encode() for event in events]
    data = b"\n".join([*encoded[:2], b"torn{", *encoded[2:4], b"[1]", b"", b"{also torn", encoded[4]]) + b"\n"
    reported = report("sid", data)
    assert reported == EventLog(t=reported.t, session_id="sid", found=True, events=5, starts=1, resumes=1,
                                closed_before_resume=True, resume_event_count=3, already_in_use=True,
                                branch_points=1, unreadable_lines=3, created_by="1.0.102", events_before_resume=3,
                                messages_before_resume=1)
    assert decode(encode(reported)) == reported  # a real event of the protocol, timestamp and all
    no_resume = report("sid", b'{"id": "1", "type": "session.start"}\n')
    assert (no_resume.closed_before_resume, no_resume.resume_event_count, no_resume.already_in_use) == (None, None, None)
    missing = report("sid", None)
    assert missing == EventLog(t=missing.t, session_id="sid", found=False)
    assert decode(encode(missing)) == missing
