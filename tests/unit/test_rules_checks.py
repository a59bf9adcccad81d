"""The checker's rules, one condition at a time (handoff/checker/checks.py): which failures
are turns of their own, which asks an expectation list counts, that a stored run's words
(actions, places, the question in the log, an expected verdict) are matched as written,
and that a record which checked nothing is no evidence of where the fact was.

Each test fails when its one condition is dropped or made blind to case (issue 44)."""

from __future__ import annotations

import pytest

from handoff.checker.checks import judge_answer, judge_scenario
from handoff.checker.verdicts import Basis, Expectation
from handoff.protocol import ActionFailed, EventLog
from handoff.runs.record import ScenarioRecord
from handoff.scenario import Step
from handoff.words import Verdict

from tests.unit.test_checker_paths import FACT, FINISHED, READY, RECALLED, scenario, seen, step, turn


def judged(spec: Step, *events, evidence=()):
    return judge_scenario(ScenarioRecord("s", scenario(spec), [step(spec.name, READY, *events, FINISHED)],
                                         list(evidence)), FACT).turns


def test_a_failed_turn_of_another_action_than_tell_look_up_or_ask_is_not_judged_as_an_ask_of_its_own():
    """A concurrent resume's failure carries its turn's number, as every failed turn does;
    it is judged once, as the step's ask that produced no answer, never as a numbered ask."""
    spec = Step("B", ("resume", "concurrent-resume-and-ask", "close"), expect="kept")
    failed = ActionFailed(t=0.0, action="concurrent-resume-and-ask", message="boom", turn=1)
    [asked] = judged(spec, failed)
    assert (asked.kind, asked.turn, asked.verdict, asked.reason) == (
        "ask", None, Verdict.FAILED_LOUDLY, "concurrent-resume-and-ask failed: boom")


def test_an_ask_that_failed_with_no_number_takes_no_place_beside_the_numbered_ones():
    spec = Step("B", ("resume", "ask", "ask", "close"), expect=("kept", "failed-loudly"))
    unnumbered = ActionFailed(t=0.0, action="ask", message="boom")
    [asked] = judged(spec, turn(1, "ask", RECALLED), unnumbered, evidence=[seen("B", 1, True)])
    assert (asked.turn, asked.verdict, asked.expectations) == (1, Verdict.KEPT,
                                                               (Expectation("verdict", "kept", "kept", True),))


def test_a_refused_ask_takes_no_place_among_the_step_s_expected_verdicts():
    """Only asks the app was answered or told failed are numbered against ``expect``: a
    refusal (the guard's) is no turn, whatever number a worker gave it."""
    spec = Step("B", ("resume", "ask", "ask", "close"), expect=("kept", "lost"))
    refused = ActionFailed(t=0.0, action="ask", message="no", refused=True, turn=1)
    [asked] = judged(spec, refused, turn(2, "ask", RECALLED), evidence=[seen("B", 2, True)])
    assert (asked.turn, asked.verdict, asked.expectations) == (2, Verdict.KEPT,
                                                               (Expectation("verdict", "kept", "kept", True),))


@pytest.mark.parametrize("action, verdict, reason", [
    ("RESUME", Verdict.FAILED_LOUDLY, "RESUME failed: Session not found"),  # not the resume, which would be lost
    ("START", Verdict.FAILED_LOUDLY, "START failed: Session not found"),  # not the worker's own check (unknown)
    ("resume", Verdict.LOST, "resume failed: Session not found"),
    ("start", Verdict.UNKNOWN, "start failed: Session not found"),
])
def test_a_failed_action_is_matched_by_its_name_as_written(action, verdict, reason):
    spec = Step("B", ("resume", "ask", "close"), expect="lost")
    [asked] = judged(spec, ActionFailed(t=0.0, action=action, message="Session not found"))
    assert (asked.verdict, asked.reason) == (verdict, reason)


def test_an_answer_in_the_log_is_this_ask_s_only_when_the_log_s_last_prompt_is_the_question_as_sent():
    def log(prompt: str) -> EventLog:
        return EventLog(t=0.0, session_id="sid", found=True, events=8, starts=1, resumes=1, closed_before_resume=True,
                        resume_event_count=7, already_in_use=False, branch_points=0, last_prompt=prompt,
                        last_reply=RECALLED)

    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    failed = ActionFailed(t=0.0, action="ask", message="timed out", turn=1)
    [same] = judged(spec, failed, log(FACT.question_prompt), evidence=[seen("B", 1, True)])
    [other] = judged(spec, failed, log(FACT.question_prompt.upper()), evidence=[seen("B", 1, True)])
    assert same.verdict == Verdict.UNDELIVERED
    assert (other.verdict, other.reason) == (Verdict.FAILED_LOUDLY, "ask failed (not a 'not found'): timed out")


@pytest.mark.parametrize("places, expected", [
    # The witness's words for the places: "user" is the history, "USER" is no place it names.
    ([("user",)], (Verdict.KEPT, "answer names the fact and the model was sent it")),
    ([("USER",)], (Verdict.UNKNOWN, "answer names the fact but the model was not sent it")),
    ([("SYSTEM",)], (Verdict.UNKNOWN, "answer names the fact but the model was not sent it")),
    ([("system",)], (Verdict.UNKNOWN, "answer names the fact, but the model was sent it only outside the session's "
                                      "history (in a system message, e.g. a memory): it proves nothing about "
                                      "persistence")),
])
def test_the_places_of_the_fact_are_the_witness_s_words_as_written(places, expected):
    verdict, reason, _ = judge_answer(RECALLED, [True], FACT, places=places)
    assert (verdict, reason) == expected


def test_a_record_that_checked_nothing_says_nothing_of_where_the_fact_was():
    """A record whose fact_sent is None looked for no fact: its places do not make it a
    record of the fact sent outside the history, and no place is named in the reason."""
    assert judge_answer(RECALLED, [None], FACT, places=[("system",)]) == (
        Verdict.UNKNOWN, "the witness model was not told which fact to look for", Basis.NOTHING)
    assert judge_answer(RECALLED, [], FACT, seen_on_the_wire=False, places=[("system",)]) == (
        Verdict.KEPT, "the answer names the value (requests to this model cannot be recorded)", Basis.ANSWER_ONLY)


def test_an_expected_verdict_is_met_only_as_written():
    """A stored run's scenario is input: "KEPT" is not the verdict kept."""
    [asked] = judged(Step("B", ("resume", "ask", "close"), expect="KEPT"), turn(1, "ask", RECALLED),
                     evidence=[seen("B", 1, True)])
    assert asked.expectations == (Expectation("verdict", "KEPT", "kept", False),)
