"""Rules of how a scenario's outcome is put in words (handoff/report/outcomes.py) and of
the skew grid's cells and axis (handoff/report/skew_grid.py):

- the judged turns are the asks, the scenario's own line and the tells with a verdict;
  a step's line is never one, whatever verdict it carries;
- a scenario's phrase says, first, that it was skipped; then that it crashed; only then
  that it came out not as expected;
- an expectation is the verdict's only when it is named "verdict" as written: one named
  otherwise ("Verdict", say) is said by its name, in a contradiction and in a cell;
- a cell whose question has no verdict is "?";
- the grid's axis is ordered by runtime first, then by SDK.
"""

from __future__ import annotations

from handoff.checker.checks import judge
from handoff.checker.verdicts import Expectation, TurnJudgement
from handoff.protocol import Backend
from handoff.report import skew_grid
from handoff.report.outcomes import contradictions, in_words, judged_turns
from handoff.runs.record import RunOptions, RunRecord, Versions
from handoff.skew import grid
from handoff.skew.expected import Pair
from handoff.words import Command, NoTurn, Verdict
from tests.unit.test_checker_paths import facts
from tests.unit.test_outcomes import B, CRASHED, KEPT, LOST_NOT_KEPT, ask, scenario, tell
from tests.unit.test_skew import FACT, RECALLED, cell_record
from tests.unit.test_skew_cells import TOLD, cell, expect, question


# --- outcomes ------------------------------------------------------------------------------

def test_a_steps_line_is_no_judged_turn_even_when_it_carries_a_verdict():
    step_line = TurnJudgement("s", NoTurn.STEP, None, B, verdict=Verdict.FAILED_LOUDLY)
    lost_tell = tell(Verdict.LOST_SILENTLY, met=False)
    assert judged_turns(scenario(step_line, lost_tell, KEPT)) == [lost_tell, KEPT]


def test_a_skipped_scenario_is_said_skipped_even_when_it_also_crashed():
    skip = TurnJudgement("s", NoTurn.SCENARIO, None, None, verdict=Verdict.SKIPPED)
    assert in_words(scenario(skip, skipped="no sshd", crashed="RuntimeError: boom")) == "skipped: no sshd"


def test_a_crashed_scenario_is_said_crashed_even_when_a_turn_before_the_crash_was_not_as_expected():
    judged = scenario(LOST_NOT_KEPT, CRASHED, crashed="RuntimeError: no host")
    assert in_words(judged) == "crashed: RuntimeError: no host"


def test_only_the_expectation_named_verdict_as_written_goes_unnamed_in_a_contradiction():
    other = TurnJudgement("s", "ask", 2, B, verdict=Verdict.LOST,
                          expectations=(Expectation("Verdict", "kept", "lost", False),))
    assert contradictions(scenario(other)) == "turn 2 (B): Verdict lost, expected kept"
    assert contradictions(scenario(ask(Verdict.LOST, "kept", False))) == "turn 2 (B): lost, expected kept"


# --- the skew grid's cells -----------------------------------------------------------------

def test_a_cells_no_names_what_the_expectation_named_verdict_as_written_wanted():
    other = Expectation("Verdict", "lost", "kept", False)  # not the verdict's expectation
    assert cell(TOLD, question(Verdict.KEPT, other, expect("kept", Verdict.KEPT, True))).text() == "kept NO(kept)"
    assert cell(TOLD, question(Verdict.KEPT, other)).text() == "kept NO()"


def test_a_cell_whose_question_has_no_verdict_could_not_be_judged():
    unjudged = TurnJudgement("c", "ask", 2, facts("resumed"), verdict=None)
    assert cell(TOLD, unjudged).text() == "?"


def test_the_grids_axis_is_ordered_by_runtime_first_then_by_sdk():
    older_runtime_newer_sdk, newer_runtime_older_sdk = Pair("1.0.92", "1.0.26"), Pair("1.0.102", "1.0.25")
    [cell_scenario] = [c for c in grid.plan([newer_runtime_older_sdk, older_runtime_newer_sdk])
                       if grid.pairs_of(c) == (older_runtime_newer_sdk, newer_runtime_older_sdk)]
    record = RunRecord("run-1", Command.SKEW, 0.0, 1.0, Versions("t", "1.0.25", "1.0.102", "3", "linux", "h", 2),
                       RunOptions(FACT.value, FACT.topic, 2, Backend()), [cell_record(cell_scenario, RECALLED, True)])
    text = skew_grid.render(record, judge(record))
    rows = [line.split()[0] for line in text.splitlines() if line.startswith("1.0.")]
    assert rows == ["1.0.92/1.0.26", "1.0.102/1.0.25"]
    markdown = skew_grid.markdown(record, judge(record))
    assert markdown.index("**1.0.92/1.0.26**") < markdown.index("**1.0.102/1.0.25**")
