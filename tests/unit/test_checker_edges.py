"""The checker where one member of a set decides a verdict: a silent loss where requests
cannot be recorded, a session opened by resume-most-recent, a tell already found lost that
still counts in the log's message count, the worker's own refusal to measure, the run's
topic in the question the log is compared with, which verdicts count as judged, the
verdicts a tell may be declared to come to, and which turns leave a run unjudged."""

from __future__ import annotations

import pytest

from handoff.checker.checks import judge, judge_scenario
from handoff.checker.verdicts import (Basis, Expectation, ExitCode, FactSeen, RunJudgement, ScenarioJudgement,
                                      TurnJudgement)
from handoff.errors import UserError
from handoff.fact import Fact
from handoff.protocol import ActionFailed, Backend, EventLog
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, Versions
from handoff.scenario import Scenario, Step
from handoff.scenario_files import load
from handoff.words import Verdict
from tests.unit.test_checker_paths import COPILOT, FACT, FINISHED, READY, seen, step, turn
from tests.unit.test_losses import FORGOT, TOLD, done, log

VERSIONS = Versions("0", "1.0.25", "1.0.102", "3.11", "Linux", "m", 2)


def run_of(*scenarios: ScenarioRecord, fact: Fact = FACT, backend: Backend = Backend()) -> RunRecord:
    return RunRecord("r", "run", 0.0, 1.0, VERSIONS, RunOptions(fact.value, fact.topic, 1, backend), list(scenarios))


# --- silent losses ---------------------------------------------------------------------------

def test_a_silent_loss_is_found_where_requests_cannot_be_recorded():
    """With the Copilot service nothing records what a tell sent (its fact 'not recorded'):
    the answer alone decides, and a resumed session whose answer lacks the value still
    loses the tell the app saw succeed — an undeclared silent loss, so the run exits 1."""
    resumed = Step("B", ("resume", "ask", "close"), expect="lost")
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), done("close"), FINISHED)
    b = step("B", READY, done("resume"), turn(1, "ask", FORGOT), done("close"), FINISHED)
    record = run_of(ScenarioRecord("s", Scenario("s", "T", "P", "D", (TOLD, resumed)), [a, b]), backend=COPILOT)
    judgement = judge(record)
    tell, ask = judgement.turns
    assert (tell.fact_reached_model, tell.verdict, tell.evidence) == (FactSeen.NOT_RECORDED, Verdict.LOST_SILENTLY,
                                                                      Basis.ANSWER_ONLY)
    assert tell.expectations == (Expectation("tell", "told", "lost-silently", False),)
    assert (ask.verdict, ask.evidence, ask.as_expected) == (Verdict.LOST, Basis.ANSWER_ONLY, True)
    assert judgement.exit_code() == ExitCode.CONTRADICTED


def test_a_session_opened_by_resume_most_recent_is_a_resume_that_can_find_a_silent_loss():
    latest = Step("B", ("resume-most-recent", "ask", "close"), expect="lost")
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), done("close"), FINISHED)
    b = step("B", READY, done("resume-most-recent"), turn(1, "ask", FORGOT), log(0), FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (TOLD, latest)), [a, b],
                            [seen("A", 1, True), seen("B", 1, False)])
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, ask.verdict) == (Verdict.LOST_SILENTLY, Verdict.LOST)
    assert RunJudgement("r", FACT.value, (judge_scenario(record, FACT),)).exit_code() == ExitCode.CONTRADICTED


def test_a_tell_already_found_lost_still_counts_among_the_turns_the_app_saw_succeed():
    """Tell 1 reached the model, tell 2 did not; B's answer finds tell 1 lost. B's log
    holds one user message where the app saw two tells succeed, so the last one, tell 2,
    is missing too: the tell found lost first is not dropped from that count."""
    twice = Step("A", ("create", "tell", "tell", "close"))
    resumed = Step("B", ("resume", "ask", "close"), expect="lost")
    a = step("A", READY, done("create"), turn(1, "tell", "OK"), turn(2, "tell", "OK"), FINISHED)
    b = step("B", READY, done("resume"), turn(1, "ask", FORGOT), log(1), FINISHED)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (twice, resumed)), [a, b],
                            [seen("A", 1, True), seen("A", 2, False), seen("B", 1, False)])
    first, second, _ = judge_scenario(record, FACT).turns
    assert (first.verdict, first.evidence) == (Verdict.LOST_SILENTLY, Basis.ANSWER_AND_WIRE)
    assert (second.verdict, second.evidence) == (Verdict.LOST_SILENTLY, Basis.EVENT_LOG)
    assert second.reason.startswith("the app saw 2 turn(s) of this session succeed, but the log step B resumed had 1")


# --- the worker's own refusals ---------------------------------------------------------------

@pytest.mark.parametrize("action", ["read-spec", "start"])
def test_a_worker_that_would_not_measure_leaves_its_question_unknown_not_failed_loudly(action):
    """The worker could not read its spec, or its runtime or SDK is not the asked version:
    nothing was tried and the app was told nothing, so the question is unknown."""
    refused = ActionFailed(t=0.0, action=action, message="not this one")
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (Step("B", ("resume", "ask"), expect="kept"),)),
                            [step("B", READY, refused, exit_code=1)])
    [asked] = judge_scenario(record, FACT).turns
    assert (asked.verdict, asked.reason, asked.evidence) == (Verdict.UNKNOWN, f"{action} failed: not this one",
                                                             Basis.RUNTIME_ERROR)


# --- the run's topic ---------------------------------------------------------------------------

OTHER = Fact("Champions", "customer tier")
TIMEOUT = ActionFailed(t=0.0, action="ask", message="Timeout after 20s waiting for session.idle", turn=1)


def _undelivered_ask(last_prompt: str) -> RunRecord:
    """A run about OTHER whose ask the app never got an answer to, and whose session log
    ends with ``last_prompt`` and an answer that names OTHER's value."""
    answered = EventLog(t=0.0, session_id="sid", found=True, events=8, starts=1, resumes=1, closed_before_resume=True,
                        resume_event_count=7, last_prompt=last_prompt, last_reply="Champions, of course.")
    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    scenario = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)),
                              [step("B", READY, done("resume"), TIMEOUT, answered, FINISHED)], [seen("B", 1, True)])
    return run_of(scenario, fact=OTHER)


def test_an_undelivered_ask_is_found_by_the_question_of_the_runs_own_topic():
    judgement = judge(_undelivered_ask("Which customer tier did I say was my favourite?"))
    [asked] = judgement.turns
    assert (asked.verdict, asked.evidence, asked.fact_reached_model) == (Verdict.UNDELIVERED, Basis.LOG_AND_WIRE,
                                                                         FactSeen.YES)
    assert judgement.exit_code() == ExitCode.AS_EXPECTED


def test_a_log_ending_with_another_topics_question_holds_no_answer_to_this_one():
    judgement = judge(_undelivered_ask(Fact().question_prompt))
    [asked] = judgement.turns
    assert (asked.verdict, asked.evidence) == (Verdict.FAILED_LOUDLY, Basis.RUNTIME_ERROR)
    assert judgement.exit_code() == ExitCode.UNJUDGED


# --- the vocabulary ----------------------------------------------------------------------------

def test_only_verdicts_about_the_session_count_as_judged():
    assert {v for v in Verdict if v.judged} == {Verdict.KEPT, Verdict.LOST, Verdict.LOST_SILENTLY, Verdict.REFUSED,
                                                Verdict.NO_PROVIDER, Verdict.UNDELIVERED}


HEADER = 'title = "T"\nproves = "P"\ndoes_not_prove = "D"\n'


@pytest.mark.parametrize("declared", ["told", "failed-loudly", "lost-silently", "unknown"])
def test_a_step_may_declare_what_its_tells_come_to(tmp_path, declared):
    path = tmp_path / "declared.toml"
    path.write_text(HEADER + f'[[steps]]\nname = "A"\nactions = ["create", "tell", "close"]\n'
                             f'expect_tell = "{declared}"\n', encoding="utf-8")
    assert load(path).steps[0].expect_tell == declared


@pytest.mark.parametrize("declared", ["kept", "skipped", "crashed"])
def test_a_tell_cannot_be_declared_to_come_to_a_questions_verdict(tmp_path, declared):
    path = tmp_path / "declared.toml"
    path.write_text(HEADER + f'[[steps]]\nname = "A"\nactions = ["create", "tell", "close"]\n'
                             f'expect_tell = "{declared}"\n', encoding="utf-8")
    with pytest.raises(UserError, match="expect_tell"):
        load(path)


# --- which turns leave a run unjudged ------------------------------------------------------------

KEPT = TurnJudgement("s", "ask", 2, None, verdict=Verdict.KEPT,
                     expectations=(Expectation("verdict", "kept", "kept", True),))
FAILED_LOUDLY = TurnJudgement("s", "ask", 3, None, verdict=Verdict.FAILED_LOUDLY,
                              expectations=(Expectation("verdict", "kept", "failed-loudly", None),))
CRASHED = TurnJudgement("s", "scenario", None, None, verdict=Verdict.CRASHED, reason="RuntimeError: no host",
                        expectations=(Expectation("verdict", "", "crashed", None),))


@pytest.mark.parametrize("unjudged", [FAILED_LOUDLY, CRASHED], ids=["failed-loudly", "crashed"])
def test_a_question_that_failed_loudly_or_a_crash_leaves_the_run_unjudged_beside_a_kept_one(unjudged):
    judgement = RunJudgement("r", "v", (ScenarioJudgement("s", "T", "P", "D", 1.0, (KEPT, unjudged)),))
    assert judgement.unjudged == [unjudged]
    assert judgement.exit_code() == ExitCode.UNJUDGED


# --- a store that could not be reached ----------------------------------------------------------

@pytest.mark.parametrize("message", [
    'Session not found: s (connection to server at "127.0.0.1", port 5432 failed: Connection refused)',
    "Failed to load session events: Session not found: s (cannot connect to PostgreSQL at h:5432)",
])
def test_psycopgs_words_for_a_store_it_could_not_reach_are_an_outage_not_a_lost_session(message):
    """Whatever else the message says ('Session not found' is how the SDK passes any failure
    to read the store on), a refused connection is the store being out."""
    failed = ActionFailed(t=0.0, action="resume", message=message)
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (Step("B", ("resume", "ask"), expect="lost"),)),
                            [step("B", READY, failed, FINISHED)])
    [asked] = judge_scenario(record, FACT).turns
    assert (asked.verdict, asked.evidence) == (Verdict.FAILED_LOUDLY, Basis.RUNTIME_ERROR)
    assert asked.reason == f"resume failed, the store was out: {message}"


# --- what a time-out rested on (hand-made mutants of waited_out and _undelivered) ----------------

def _log(**values) -> EventLog:
    return EventLog(t=0.0, session_id="sid", found=True, **values)


def test_a_time_out_names_when_the_log_has_the_answer_only_when_it_has_both_the_answer_and_its_time():
    from handoff.checker.checks import waited_out

    timed = ActionFailed(t=0.0, action="ask", message="Timeout", turn=1, timeout_s=20)
    both = waited_out(timed, _log(last_prompt="q", last_reply="a", last_reply_ms=6000))
    assert both == "no answer within 20 s; the session's log has the answer at +6.0 s"
    for log in (_log(last_prompt="q", last_reply=None, last_reply_ms=6000), _log(last_prompt="q", last_reply="a"),
                None):
        assert waited_out(timed, log) == "no answer within 20 s"  # (a time without an answer, or none)
    assert waited_out(TIMEOUT, _log(last_reply="a", last_reply_ms=1)) is None  # no time-out: no time


def test_an_ask_is_undelivered_only_when_it_failed_and_the_log_holds_an_answer_to_it():
    from handoff.checker.checks import _undelivered
    from handoff.checker.verdicts import StepFacts

    def facts(failures, log) -> StepFacts:
        return StepFacts("B", "local", "shared", "home", None, log, (), failures, None, (), True, 0, False, ())

    answered = _log(last_prompt=OTHER.question_prompt, last_reply="Champions, of course.")
    no_reply = _log(last_prompt=OTHER.question_prompt)
    for failures, log in (((), answered), ((TIMEOUT,), no_reply), ((TIMEOUT,), None)):
        assert _undelivered(facts(failures, log), [True], OTHER, Backend()) is None, (failures, log)
    assert _undelivered(facts((TIMEOUT,), answered), [True], OTHER, Backend())[0] == Verdict.UNDELIVERED


def test_a_step_that_neither_tells_nor_asks_and_died_gets_its_line_not_a_tell_of_its_own():
    """A step that only resumes and closes, whose worker died: nothing was told, so nothing
    can have failed to be told; it keeps its one line (and a step that tells does not)."""
    quiet = Step("B", ("resume", "close"))
    died = step("B", READY, done("resume"))  # no finished event: the worker is gone
    [line] = judge_scenario(ScenarioRecord("s", Scenario("s", "T", "P", "D", (quiet,)), [died]), FACT).turns
    assert line.kind == "step" and line.verdict is None
    telling = Step("B", ("resume", "tell", "close"))
    [told] = judge_scenario(ScenarioRecord("s", Scenario("s", "T", "P", "D", (telling,)), [died]), FACT).turns
    assert told.kind == "tell" and told.verdict is not None
