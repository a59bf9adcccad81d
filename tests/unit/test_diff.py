"""`handoff diff`: which judged facts of a turn it compares, how it matches turns across two
runs, and what it prints — verdicts in words first, then the evidence that changed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from handoff.checker.verdicts import Basis, Expectation, FactSeen, RunJudgement, ScenarioJudgement, TurnJudgement
from handoff.report.diff import Difference, differences, render
from handoff.words import Verdict
from tests.unit.test_checker_paths import facts, log

STEP = facts("B", eventlog=log(True))
KEPT = TurnJudgement("s", "ask", 2, STEP, answer="At Risk", fact_reached_model=FactSeen.YES, verdict=Verdict.KEPT,
                     reason="answer names the fact and the model was sent it", evidence=Basis.ANSWER_AND_WIRE,
                     expectations=(Expectation("verdict", "kept", "kept", True),), session="sid")
TOLD = replace(KEPT, turn=1, kind="tell", verdict=None, reason="", expectations=())
KEY = ("s", "B", "2", "ask")


def run(run_id: str, *turns: TurnJudgement) -> RunJudgement:
    return RunJudgement(run_id, "At Risk", (ScenarioJudgement("s", "T", "P", "D", 1.0, turns),))


@pytest.mark.parametrize("changed, field, before, after", [
    (dict(verdict=Verdict.LOST), "verdict", "kept", "lost"),
    (dict(evidence=Basis.ANSWER_ONLY), "evidence", "answer + wire", "answer only"),
    (dict(fact_reached_model=FactSeen.NOT_RECORDED), "fact reached model", "yes", "not recorded"),
    (dict(step=facts("B", eventlog=log(False))), "closed before resume", "yes", "no"),
    (dict(expectations=(Expectation("verdict", "lost", "kept", False),)), "match", "yes", "NO"),
])
def test_each_judged_fact_of_a_turn_is_compared_on_its_own(changed, field, before, after):
    assert differences(run("a", KEPT), run("b", replace(KEPT, **changed))) == [Difference(KEY, field, before, after)]


def test_what_always_differs_between_two_runs_is_not_compared():
    """The reason's wording, the answer's text, the session id and a time-out's times."""
    again = replace(KEPT, answer="at risk!", reason="other words", session="other", timed="no answer within 20 s")
    assert differences(run("a", KEPT), run("b", again)) == []


def test_a_turn_in_one_run_only_is_listed_as_present_or_absent_after_those_in_both():
    crashed = TurnJudgement("s", "scenario", None, None, verdict=Verdict.CRASHED)
    assert differences(run("a", TOLD, KEPT), run("b", KEPT, crashed)) == [
        Difference(("s", "B", "1", "tell"), "turn", "present", "absent"),
        Difference(("s", "—", "—", "scenario"), "turn", "absent", "present"),
    ]


def test_a_question_is_matched_by_its_place_in_its_step_and_numbered_from_either_run():
    unnumbered = replace(KEPT, turn=None, verdict=Verdict.REFUSED, evidence=Basis.GUARD)
    second = replace(KEPT, turn=3, verdict=Verdict.LOST)
    assert differences(run("a", unnumbered, second), run("b", KEPT, replace(second, verdict=Verdict.KEPT))) == [
        Difference(KEY, "verdict", "refused", "kept"),
        Difference(KEY, "evidence", "guard", "answer + wire"),
        Difference(("s", "B", "3", "ask"), "verdict", "lost", "kept"),
    ]


def test_verdicts_come_first_in_words_with_whether_they_held_then_the_evidence_as_a_table():
    later = replace(KEPT, verdict=Verdict.LOST, evidence=Basis.ANSWER_ONLY,
                    expectations=(Expectation("verdict", "kept", "lost", False),))
    assert render(run("run-a", KEPT), run("run-b", later)) == (
        "run-a -> run-b: 1 verdict changed, 1 other difference\n"
        "\n"
        "s turn 2 (B, ask): kept → lost, as expected → NOT as expected\n"
        "\n"
        "scenario    step    turn    what      run-a          run-b\n"
        "----------  ------  ------  --------  -------------  -----------\n"
        "s           B       2 ask   evidence  answer + wire  answer only")


def test_a_tell_with_no_verdict_reads_as_a_dash_and_a_turn_in_one_run_says_which():
    lost = replace(TOLD, verdict=Verdict.LOST_SILENTLY, fact_reached_model=FactSeen.NO)
    assert render(run("run-a", TOLD, KEPT), run("run-b", lost)) == (
        "run-a -> run-b: 2 verdicts changed, 1 other difference\n"
        "\n"
        "s turn 1 (B, tell): — → lost-silently\n"
        "s turn 2 (B, ask): only in the first run\n"
        "\n"
        "scenario    step    turn    what                run-a    run-b\n"
        "----------  ------  ------  ------------------  -------  -------\n"
        "s           B       1 tell  fact reached model  yes      no")
    assert render(run("run-a", KEPT), run("run-b", KEPT, replace(KEPT, turn=3))) == (
        "run-a -> run-b: 1 verdict changed, 0 other differences\n\ns turn 3 (B, ask): only in the second run")


def test_a_question_that_could_not_be_judged_says_so():
    unknown = replace(KEPT, verdict=Verdict.UNKNOWN, expectations=(Expectation("verdict", "kept", "unknown", None),))
    assert render(run("run-a", KEPT), run("run-b", unknown)).splitlines()[2] == (
        "s turn 2 (B, ask): kept → unknown, as expected → not judged")


def test_no_difference_says_how_many_turns_were_compared():
    assert render(run("run-a", KEPT), run("run-b", KEPT)) == (
        "run-a -> run-b: no turn differs in verdict or evidence (1 turn compared)")
    two = run("run-b", KEPT, replace(KEPT, turn=3))
    assert render(two, two).endswith("(2 turns compared)")


def test_a_tell_found_lost_in_one_run_and_told_in_the_other_reads_both_ways():
    """A plain told tell has no verdict and expects nothing: its side reads as a dash, and
    never as 'None'."""
    lost = replace(TOLD, verdict=Verdict.LOST_SILENTLY,
                   expectations=(Expectation("tell", "told", "lost-silently", False),))
    later = render(run("run-a", TOLD), run("run-b", lost)).splitlines()[2]
    earlier = render(run("run-a", lost), run("run-b", TOLD)).splitlines()[2]
    assert later.startswith("s turn 1 (B, tell): — → lost-silently, ") and later.endswith("→ NOT as expected")
    assert earlier.startswith("s turn 1 (B, tell): lost-silently → —, NOT as expected → ")
    assert "None" not in later + earlier
