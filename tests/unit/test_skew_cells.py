"""The version-skew grid's cells: what one cell says about its question (the verdict, the
events the resume loaded, whether it held as expected), and where the cells go when the
grid is not full."""

from __future__ import annotations

import pytest

from handoff.checker.checks import judge
from handoff.checker.verdicts import Expectation, ScenarioJudgement, TurnJudgement
from handoff.protocol import Backend, EventLog
from handoff.report import skew_grid
from handoff.report.skew_grid import Cell
from handoff.runs.record import RunOptions, RunRecord, Versions
from handoff.skew import grid
from handoff.words import Verdict
from handoff.words import Command
from tests.unit.test_checker_paths import facts
from tests.unit.test_skew import FACT, NEW, OLD, RECALLED, cell_record

LOADED_7_OF_8 = EventLog(t=0.0, session_id="x", found=True, resumes=1, resume_event_count=7, events_before_resume=8)


def question(verdict: Verdict, *expectations: Expectation, kind: str = "ask", step=facts("resumed")) -> TurnJudgement:
    return TurnJudgement("c", kind, 2 if kind == "ask" else None, step, verdict=verdict, expectations=expectations)


def cell(*turns: TurnJudgement) -> Cell:
    return Cell(OLD, NEW, ScenarioJudgement("c", "T", "P", "D", 1.0, turns))


def expect(wanted: str, got: Verdict, met: bool | None) -> Expectation:
    return Expectation("verdict", wanted, got.value, met)


TOLD = TurnJudgement("c", "tell", 1, facts("created"), answer="OK")


@pytest.mark.parametrize("turns, text", [
    ((TOLD, question(Verdict.KEPT, expect("kept", Verdict.KEPT, True))), "kept"),
    ((TOLD, question(Verdict.LOST, expect("kept", Verdict.LOST, False))), "lost NO(kept)"),
    ((TOLD, question(Verdict.UNKNOWN, expect("kept", Verdict.UNKNOWN, None))), "unknown ?"),
    ((TOLD, question(Verdict.KEPT)), "kept ?"),  # nothing expected of it: not judged either
    ((TOLD, question(Verdict.KEPT, expect("kept", Verdict.KEPT, True), step=facts("resumed", eventlog=LOADED_7_OF_8))),
     "kept 7/8"),
    ((TurnJudgement("c", "scenario", None, None, verdict=Verdict.SKIPPED),), "skipped"),
    ((TOLD, question(Verdict.CRASHED, expect("", Verdict.CRASHED, None), kind="scenario", step=None)), "crashed ?"),
    ((TOLD, TurnJudgement("c", "step", None, facts("resumed"))), "?"),  # the resume never asked
])
def test_a_cell_says_its_questions_verdict_and_whether_it_held(turns, text):
    assert cell(*turns).text() == text


def test_a_cell_whose_verdict_held_but_another_expectation_did_not_is_marked_not_as_expected():
    skipped_events = Expectation("loaded all events", "all events loaded", "events skipped", False)
    turn = question(Verdict.KEPT, expect("kept", Verdict.KEPT, True), skipped_events,
                    step=facts("resumed", eventlog=LOADED_7_OF_8))
    assert cell(TOLD, turn).text() == "kept 7/8 NO(kept)"
    assert cell(TOLD, question(Verdict.KEPT, skipped_events)).text() == "kept NO()"


def test_a_grid_of_some_cells_only_has_an_axis_of_every_pair_named_and_blanks_where_no_cell_ran():
    [upgrade] = [c for c in grid.plan([OLD, NEW]) if grid.pairs_of(c) == (OLD, NEW)]
    record = RunRecord("run-1", Command.SKEW, 0.0, 1.0, Versions("t", "1.0.25", "1.0.102", "3", "linux", "h", 2),
                       RunOptions(FACT.value, FACT.topic, 2, Backend()),
                       [cell_record(upgrade, RECALLED, True)])
    text = skew_grid.render(record, judge(record))
    rows = [line for line in text.splitlines() if line.startswith("1.0.")]
    assert [line.split() for line in rows] == [["1.0.92/1.0.25", "kept"], ["1.0.102/1.0.25"]]
    header = next(line for line in text.splitlines() if line.startswith("created by"))
    assert rows[0].index("kept") == header.index("1.0.102")  # under the resumed-by column
    assert "1 cell, 1 as expected" in text
    markdown = skew_grid.markdown(record, judge(record))
    assert "| **1.0.92/1.0.25** |  | kept |" in markdown and "| **1.0.102/1.0.25** |  |  |" in markdown
