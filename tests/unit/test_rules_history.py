"""Rules of how a stored run's words are read into its history (handoff/runs/history.py):
they are matched as written, never regardless of case.

- a step's name is its own as written: steps "B" and "b" are two steps, each found by
  its own name;
- a witness record is the runtime's compaction request only when its interaction is
  COMPACTION as written: one whose interaction differs in case is no compaction's, and
  (with no turn the worker reported) it is a turn the worker never reported.
"""

from __future__ import annotations

import dataclasses

from handoff.runs.history import ScenarioHistory
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.tags import COMPACTION
from tests.unit.test_html_report import FACT, evidence


def test_steps_whose_names_differ_only_in_case_are_two_steps_each_found_by_its_own_name():
    scenario = Scenario("s", "T", "P", "D", (Step("B", ("create",)), Step("b", ("resume",))))
    steps = [StepRecord(name, "local", "shared", "home", "x", lines=[]) for name in ("B", "b")]
    history = ScenarioHistory.of(ScenarioRecord("s", scenario, steps, []), FACT)
    upper, lower = history.steps
    assert (upper.name, lower.name) == ("B", "b")
    assert history.step("B") is upper and history.step("b") is lower


def test_a_record_whose_interaction_is_compaction_in_another_case_is_no_compaction_but_an_unreported_request():
    scenario = Scenario("s", "T", "P", "D", (Step("A", ("create", "compact")),))
    step = StepRecord("A", "local", "shared", "home", "x", lines=[])
    compaction = dataclasses.replace(evidence("A", None, True), at=1.0, interaction=COMPACTION)
    other_case = dataclasses.replace(evidence("A", None, True), at=2.0, interaction=COMPACTION.upper())
    assert COMPACTION.upper() != COMPACTION
    [history] = ScenarioHistory.of(ScenarioRecord("s", scenario, [step], [compaction, other_case]), FACT).steps
    assert history.compactions == (compaction,)
    assert history.unreported == (other_case,)
