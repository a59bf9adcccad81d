"""The one-screen answer: which condition each shipped rung is about, and what a run's
rungs showed per condition, in the lab's order."""

from __future__ import annotations

import pytest

from handoff import scenario_files
from handoff.checker.verdicts import RunJudgement, ScenarioJudgement, TurnJudgement, Expectation
from handoff.report import summary
from handoff.words import Verdict

ALL = {**{s.name: s for s in scenario_files.select([])}, **{s.name: s for s in scenario_files.tagged("faults")}}


@pytest.mark.parametrize("name, condition", [
    ("same-process", "same process"), ("forgot-to-close", "same process"), ("cross-process", "new process"),
    ("isolated-store", "new process"), ("cross-machine-ssh", "new machine"), ("cross-machine-postgres", "new machine"),
    ("cross-container-volume", "new container"), ("cross-process-postgres", "database store"),
    ("resume-on-old-runtime", "compatible runtime"), ("downgrade-known-good", "compatible runtime"),
    ("foreign-principal", "authorization"), ("stale-lease-after-crash", "faults"), ("fault-kill-mid-turn", "faults"),
    ("browser-reload-server-killed", "web app"), ("device-handoff", "web app"),
])
def test_each_rung_is_about_one_condition(name, condition):
    assert summary.condition(ALL[name]) == condition


def test_every_shipped_rung_has_a_condition_the_summary_knows():
    known = {name for name, _, _ in summary.CONDITIONS}
    assert {summary.condition(s) for s in ALL.values()} == known  # and every condition has a rung


def judged(name: str, *verdicts: Verdict, as_expected: bool = True) -> ScenarioJudgement:
    turns = tuple(TurnJudgement(name, "ask", n, None, verdict=v,
                                expectations=(Expectation("verdict", v.value, v.value if as_expected else "kept",
                                                          as_expected),)) for n, v in enumerate(verdicts, 1))
    return ScenarioJudgement(name, "T", "P", "D", 1.0, turns)


def test_a_line_names_what_kept_what_did_not_and_what_went_wrong():
    run = RunJudgement("r", "f", (judged("cross-process", Verdict.KEPT), judged("isolated-store", Verdict.LOST),
                             judged("no-id", Verdict.LOST, as_expected=False),
                             judged("foreign-principal", Verdict.KEPT, Verdict.REFUSED)))
    lines = {line.condition: line for line in summary.lines(run, ALL)}
    process = lines["new process"]
    assert (process.kept, process.controls, process.wrong) == (("cross-process",), ("isolated-store",), ("no-id",))
    assert process.text() == ("resumed from the same home: cross-process; the controls lost it: isolated-store; "
                              "NOT shown, look at no-id.")
    authorization = lines["authorization"]  # raw and guarded steps in one rung: both halves shown, the rung named once
    assert authorization.kept == authorization.controls == ("foreign-principal",)
    assert authorization.text() == "the raw SDK resumed any id and the guard refused, turn by turn: foreign-principal."
    assert "+" not in process.text() + authorization.text()  # every rung named, no count in its place
    assert list(lines) == ["new process", "authorization"]  # the lab's order; conditions with no rung left out
    assert summary.headline(run, list(lines.values())) == \
        "What persistence proved in this run (4 rungs; 1 rung(s) did NOT come out as expected):"


def test_the_lab_says_what_it_proved_and_what_it_leaves_to_the_ladder():
    kept = RunJudgement("r", "f", (judged("lab", Verdict.KEPT),))
    said = summary.lab_sentence(kept, second_process=False)
    assert said.startswith("This lab run proved that a session resumes by id after close, in the same process")
    assert "does not prove recovery after a restart or a handoff to another machine" in said
    assert "shared storage, a compatible runtime and authorization" in said
    lost = RunJudgement("r", "f", (judged("lab", Verdict.LOST),))
    assert summary.lab_sentence(lost, second_process=True).startswith(
        "This lab run did NOT show the session kept in a second process, from the same home (lost).")
