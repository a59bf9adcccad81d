"""How a scenario came out, in the words the progress lines, the rung lines, the ladder
and the summary share (handoff/report/outcomes.py): its standing always agrees with the
exit code a run of it alone gives, and every phrase names what it rests on."""

from __future__ import annotations

import pytest

from dataclasses import replace

from handoff.checker.verdicts import (Basis, Expectation, ExitCode, FactSeen, RunJudgement, ScenarioJudgement,
                                      TurnJudgement)
from handoff.words import Verdict
from handoff.report.outcomes import (Standing, contradictions, in_words, judged_turns, standing, verdicts,
                                     what_went_wrong)
from handoff.report.terminal import WIDTH, rung_line, summary
from tests.unit.test_checker_paths import facts

B = facts("B")


def ask(verdict: Verdict, wanted: str | None = "kept", met: bool | None = True, number: int | None = 2,
        step=B, reason: str = "why") -> TurnJudgement:
    expectations = () if wanted is None else (Expectation("verdict", wanted, verdict.value, met),)
    return TurnJudgement("s", "ask", number, step, verdict=verdict, reason=reason, expectations=expectations)


def tell(verdict: Verdict | None = None, wanted: str = "told", met: bool | None = None, number: int = 1):
    expectations = () if verdict is None else (Expectation("tell", wanted, verdict.value, met),)
    return TurnJudgement("s", "tell", number, B, answer="OK", fact_reached_model=FactSeen.YES, verdict=verdict,
                         reason="tell why", expectations=expectations)


def scenario(*turns: TurnJudgement, name: str = "s", skipped: str | None = None,
             crashed: str | None = None) -> ScenarioJudgement:
    turns = tuple(replace(turn, scenario=name) for turn in turns)
    return ScenarioJudgement(name, "T", "proves this", "not that", 1.0, turns, skipped=skipped, crashed=crashed)


KEPT = ask(Verdict.KEPT)
LOST_NOT_KEPT = ask(Verdict.LOST, "kept", False)
UNKNOWN = ask(Verdict.UNKNOWN, "kept", None, number=3, reason="the witness model has no record of this turn")
FAILED_LOUDLY = ask(Verdict.FAILED_LOUDLY, "kept", None, number=3, reason="ask failed: boom")
EXPECTED_FAILURE = ask(Verdict.FAILED_LOUDLY, "failed-loudly", True, number=3)
CRASHED = TurnJudgement("s", "scenario", None, None, verdict=Verdict.CRASHED, reason="RuntimeError: no host",
                        evidence=Basis.NOTHING, expectations=(Expectation("verdict", "", "crashed", None),))
UNEXPECTED = ask(Verdict.KEPT, None)  # an ask nobody declared an expectation for

STANDINGS = [
    (scenario(tell(), KEPT), Standing.AS_EXPECTED, ExitCode.AS_EXPECTED),
    (scenario(KEPT, EXPECTED_FAILURE), Standing.AS_EXPECTED, ExitCode.AS_EXPECTED),
    (scenario(KEPT, LOST_NOT_KEPT), Standing.CONTRADICTED, ExitCode.CONTRADICTED),
    (scenario(LOST_NOT_KEPT, UNKNOWN), Standing.CONTRADICTED, ExitCode.CONTRADICTED),
    (scenario(tell(Verdict.LOST_SILENTLY, met=False), KEPT), Standing.CONTRADICTED, ExitCode.CONTRADICTED),
    (scenario(KEPT, UNKNOWN), Standing.UNJUDGED, ExitCode.UNJUDGED),
    (scenario(KEPT, FAILED_LOUDLY), Standing.UNJUDGED, ExitCode.UNJUDGED),
    (scenario(tell(Verdict.FAILED_LOUDLY), KEPT), Standing.UNJUDGED, ExitCode.UNJUDGED),
    (scenario(KEPT, CRASHED, crashed="RuntimeError: no host"), Standing.UNJUDGED, ExitCode.UNJUDGED),
    (scenario(TurnJudgement("s", "scenario", None, None, verdict=Verdict.SKIPPED), skipped="no sshd"),
     Standing.SKIPPED, ExitCode.UNJUDGED),
    (scenario(UNEXPECTED), Standing.NOTHING_JUDGED, ExitCode.UNJUDGED),
    (scenario(tell(), TurnJudgement("s", "step", None, B)), Standing.NOTHING_JUDGED, ExitCode.UNJUDGED),
]


@pytest.mark.parametrize("judged, state, code", STANDINGS)
def test_a_scenarios_standing_agrees_with_the_exit_code_of_a_run_of_it_alone(judged, state, code):
    assert standing(judged) == state
    assert RunJudgement("r", "v", (judged,)).exit_code() == code


def test_the_judged_turns_are_the_questions_the_failed_or_lost_tells_and_a_skip_or_crash():
    lost_tell = tell(Verdict.LOST_SILENTLY, met=False)
    turns = (tell(), lost_tell, TurnJudgement("s", "step", None, B), KEPT, CRASHED)
    assert judged_turns(scenario(*turns)) == [lost_tell, KEPT, CRASHED]


def test_the_verdicts_are_listed_in_order_and_a_scenario_with_none_says_so():
    assert verdicts(scenario(tell(), KEPT, LOST_NOT_KEPT)) == "kept, lost"
    assert verdicts(scenario(tell(), UNEXPECTED)) == "kept"
    assert verdicts(scenario(tell())) == "no verdict"


def test_each_contradiction_names_its_turn_step_and_what_was_expected():
    unnumbered = ask(Verdict.LOST, "kept", False, number=None)
    not_closed = TurnJudgement("s", "ask", 4, facts("C"), verdict=Verdict.KEPT, expectations=(
        Expectation("verdict", "kept", "kept", True),
        Expectation("closed before resume", "closed", "not closed", False)))
    stepless = TurnJudgement("s", "scenario", None, None, verdict=Verdict.SKIPPED,
                             expectations=(Expectation("verdict", "kept", "skipped", False),))
    assert contradictions(scenario(KEPT, LOST_NOT_KEPT, unnumbered, not_closed, stepless)) == (
        "turn 2 (B): lost, expected kept; turn — (B): lost, expected kept; "
        "turn 4 (C): closed before resume not closed, expected closed; it: skipped, expected kept")
    assert contradictions(scenario(KEPT, UNKNOWN)) == ""


@pytest.mark.parametrize("judged, words", [
    (scenario(tell(), KEPT), "kept, as expected"),
    (scenario(KEPT, LOST_NOT_KEPT), "kept, lost: NOT as expected (turn 2 (B): lost, expected kept)"),
    (scenario(KEPT, UNKNOWN), "kept, unknown, could not be judged"),
    (scenario(UNEXPECTED), "kept, nothing to judge"),
    (scenario(tell()), "no verdict, nothing to judge"),
    (scenario(TurnJudgement("s", "scenario", None, None, verdict=Verdict.SKIPPED), skipped="no sshd"),
     "skipped: no sshd"),
    (scenario(KEPT, CRASHED, crashed="RuntimeError: no host"), "crashed: RuntimeError: no host"),
])
def test_a_finished_scenario_in_one_phrase(judged, words):
    assert in_words(judged) == words


def run(*scenarios: ScenarioJudgement) -> RunJudgement:
    return RunJudgement("r", "v", scenarios)


def test_what_went_wrong_names_the_silent_losses_then_the_contradicted_then_the_unjudged():
    declared = tell(Verdict.LOST_SILENTLY, "lost-silently", True)
    undeclared = tell(Verdict.LOST_SILENTLY, met=False, number=3)
    judged = run(scenario(declared, KEPT, name="tamper"), scenario(undeclared, KEPT, LOST_NOT_KEPT, name="b-rung"),
                 scenario(KEPT, LOST_NOT_KEPT, name="a-rung"), scenario(UNKNOWN, FAILED_LOUDLY, name="d-rung"),
                 scenario(KEPT, UNKNOWN, name="c-rung"))
    assert what_went_wrong(judged) == ("; 2 silent losses (1 declared by their scenario); NOT as expected: a-rung, "
                                       "b-rung; could not be judged: c-rung, d-rung")
    assert what_went_wrong(run(scenario(declared, KEPT))) == "; 1 silent loss (1 declared by their scenario)"
    assert what_went_wrong(run(scenario(tell(), KEPT))) == ""


def test_the_summary_line_counts_scenarios_judged_turns_and_those_as_expected_then_what_went_wrong():
    judged = run(scenario(tell(), KEPT, name="kept"), scenario(KEPT, LOST_NOT_KEPT, name="lost"),
                 scenario(UNEXPECTED, name="none"), scenario(KEPT, UNKNOWN, name="unknown"))
    assert summary(judged) == ("4 scenarios, 4 judged turns, 3 as expected; NOT as expected: lost; could not be "
                               "judged: unknown")
    assert summary(run(scenario(KEPT))) == "1 scenario, 1 judged turn, 1 as expected"


def test_a_long_summary_wraps_within_the_width_without_breaking_a_rung_name():
    names = [f"a-long-hyphenated-rung-name-{n}" for n in range(6)]
    text = summary(run(*(scenario(KEPT, LOST_NOT_KEPT, name=name) for name in names)))
    lines = text.splitlines()
    assert len(lines) > 1 and all(len(line) <= WIDTH for line in lines)
    assert all(line.startswith("  ") and not line.startswith("   ") for line in lines[1:])
    assert all(any(name in line for line in lines) for name in names)
    assert " ".join(text.split()) == ("6 scenarios, 12 judged turns, 6 as expected; NOT as expected: "
                                      + ", ".join(names))


def test_a_rung_that_crashed_says_so_with_its_reason():
    assert rung_line(scenario(KEPT, CRASHED, crashed="RuntimeError: no host"), "x", "y") == (
        "s crashed: RuntimeError: no host")


def test_a_rung_that_could_not_be_judged_gives_the_reason_of_its_first_turn_not_as_expected():
    assert rung_line(scenario(KEPT, FAILED_LOUDLY, UNKNOWN), "x", "y") == "s could not be judged: ask failed: boom"


def test_a_rung_with_nothing_judged_shows_rather_than_proves():
    assert rung_line(scenario(UNEXPECTED), "a resume works", "a restart") == (
        "s shows (nothing judged) a resume works, not a restart.")
    assert rung_line(scenario(KEPT), "A resume works", "A restart") == "s proved a resume works, not a restart."
