"""Rules of `handoff diff` (handoff/report/diff.py) that other tests leave open:

* turns are matched by their place among the turns of their step and kind, counted one
  by one from 0: the third question of a step is the third of the other run's;
* when the two runs took different paths to the model, a paragraph saying so comes first,
  a blank line apart from the rest;
* of the evidence table, the scenario, what differs and both runs' values wrap in a
  narrow terminal; the step and the turn never do.
"""

from dataclasses import replace

from handoff.checker.verdicts import Basis, FactSeen
from handoff.report.diff import _matched, render
from tests.unit.test_checker_paths import facts, log
from tests.unit.test_diff import KEPT, run


def test_the_turns_of_one_step_and_kind_are_matched_by_their_place_counted_from_0():
    second, third = replace(KEPT, turn=3), replace(KEPT, turn=4)
    told = replace(KEPT, turn=1, kind="tell")
    assert _matched(run("a", KEPT, told, second, third)) == {
        ("s", "B", "ask", 0): KEPT, ("s", "B", "tell", 0): told,
        ("s", "B", "ask", 1): second, ("s", "B", "ask", 2): third}


def test_runs_that_took_different_paths_say_so_first_a_blank_line_apart():
    assert render(run("run-a", KEPT), run("run-b", KEPT), paths=("copilot-service", "sdk")) == (
        "The two runs took different paths to the model: run-a the copilot-service path, run-b the sdk one: a\n"
        "verdict they differ in may be the path's doing.\n"
        "\n"
        "run-a -> run-b: no turn differs in verdict or evidence (1 turn compared)")
    assert render(run("run-a", KEPT), run("run-b", KEPT), paths=("sdk", "sdk")) == (
        "run-a -> run-b: no turn differs in verdict or evidence (1 turn compared)")


def test_in_a_narrow_terminal_the_evidence_table_wraps_all_but_its_step_and_turn(monkeypatch):
    monkeypatch.setenv("COLUMNS", "65")
    before = replace(KEPT, scenario="a resumed conversation", step=facts("second step", eventlog=log(True)))
    after = replace(before, evidence=Basis.ANSWER_ONLY, fact_reached_model=FactSeen.NOT_RECORDED,
                    step=facts("second step", eventlog=log(False)))
    assert render(run("run-a", before), run("run-b", after)) == (
        "run-a -> run-b: 0 verdicts changed, 3 other differences\n"
        "\n"
        "scenario    step         turn    what      run-a     run-b\n"
        "----------  -----------  ------  --------  --------  --------\n"
        "a resumed   second step  2 ask   evidence  answer +  answer\n"
        "conversati                                 wire      only\n"
        "on\n"
        "a resumed   second step  2 ask   fact      yes       not\n"
        "conversati                       reached             recorded\n"
        "on                               model\n"
        "a resumed   second step  2 ask   closed    yes       no\n"
        "conversati                       before\n"
        "on                               resume")
