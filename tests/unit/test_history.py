"""A run's step history (handoff/runs/history.py): each step's lines decoded once, the
witness's records keyed by the step's own turn number, both numbers of every turn, the
fact whole."""

from __future__ import annotations

import dataclasses

import msgspec

from handoff.checker.checks import judge
from handoff.fact import Fact
from handoff.protocol import Finished, Turn, decode_all
from handoff.report.formats import FORMATS, rendered
from handoff.runs import record as record_module
from handoff.runs.history import RunHistory, ScenarioHistory
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.tags import COMPACTION, filler_turn
from tests.unit.test_html_report import FACT, RECORD, evidence, lines, run_record


def test_a_steps_lines_are_decoded_once_and_again_only_when_they_changed():
    step = StepRecord("A", "local", "shared", "home", "id-1", lines=lines(Finished(t=1.0, ok=True)))
    first = step.view()
    assert step.view() is first and first.finished is not None
    step.lines.append("not an event")  # a running step's lines grow
    assert step.view() is not first and len(step.view().problems) == 1
    copy = msgspec.structs.replace(step, lines=lines(Finished(t=2.0, ok=False)))  # a redacted copy, say
    assert copy.view().finished.ok is False and step.view().finished.ok is True
    assert b"_view" not in msgspec.json.encode(step)  # kept beside the record, never stored with it


def test_judging_a_run_and_making_every_report_of_it_decode_each_step_once(monkeypatch):
    decoded = []
    monkeypatch.setattr(record_module, "decode_all", lambda lines: decoded.append(lines) or decode_all(lines))
    # Steps of their own: RECORD's were decoded and kept by whichever test read them first.
    fresh = msgspec.structs.replace(RECORD, steps=[msgspec.structs.replace(step, lines=list(step.lines))
                                                   for step in RECORD.steps])
    record = run_record(fresh)
    judgement = judge(record)
    for form in FORMATS:
        rendered(record, judgement, form)
    assert len(decoded) == len(RECORD.steps)


def test_each_turn_has_the_steps_number_and_the_scenarios():
    history = ScenarioHistory.of(RECORD, FACT)
    a, b, c = history.steps
    assert [s.first_turn for s in history.steps] == [1, 2, 3]  # A's actions take one turn, B's one
    assert b.in_scenario(1) == 2 and b.in_step(2) == 1
    assert history.step("B") is b and c.name == "C"


def test_the_witnesss_records_are_keyed_by_the_steps_own_turn_as_a_number():
    scenario = Scenario("s", "T", "P", "D", (Step("A", ("create", "tell", "tell")),))
    said = [Turn(t=float(n), turn=n, kind="tell", session_id="x", prompt="p", answer="OK", ms=1) for n in (1, 2)]
    step = StepRecord("A", "local", "shared", "home", "x", lines=lines(*said))
    records = [evidence("A", "1", True), evidence("A", "2", False), evidence("A", "2", None),
               evidence("A", "02", True), evidence("A", None, True), evidence("A", "3", True),
               evidence("other", "1", False)]
    [history] = ScenarioHistory.of(ScenarioRecord("s", scenario, [step], records), FACT).steps
    assert sorted(history.requests) == [1, 2, 3]
    assert history.fact_sent(1) == [True] and history.fact_sent(2) == [False, None] and history.fact_sent(4) == []
    # a turn the worker never reported, or one the witness did not name as the worker numbers them
    assert [e.turn for e in history.unreported] == ["02", None, "3"]


def test_the_witnesss_compaction_and_filler_records_are_the_steps_own_in_the_order_they_came():
    scenario = Scenario("s", "T", "P", "D", (Step("A", ("create", "tell", "compact")),))
    step = StepRecord("A", "local", "shared", "home", "x", lines=lines(
        Turn(t=1.0, turn=1, kind="tell", session_id="x", prompt="p", answer="OK", ms=1)))
    compacted = [dataclasses.replace(evidence("A", None, True), at=at, interaction=COMPACTION) for at in (5.0, 2.0)]
    filled = [dataclasses.replace(evidence("A", filler_turn(n), True), at=at) for n, at in ((2, 4.0), (1, 3.0))]
    [history] = ScenarioHistory.of(ScenarioRecord("s", scenario, [step], [*compacted, *filled]), FACT).steps
    assert [e.at for e in history.compactions] == [2.0, 5.0]
    assert [e.turn for e in history.filler] == [filler_turn(1), filler_turn(2)]
    assert history.unreported == ()  # neither is a turn the worker never reported


def test_a_runs_history_has_the_fact_whole():
    told = Fact("O'Brien", "customer tier")
    record = run_record(RECORD)
    record = msgspec.structs.replace(record, options=msgspec.structs.replace(record.options, fact=told.value,
                                                                             topic=told.topic))
    history = RunHistory.of(record)
    assert history.fact == told and history.scenarios[0].fact == told


def test_steps_beyond_the_scenarios_plan_take_no_turns_and_break_nothing():
    """A stored run may hold more step records than its scenario plans (an edited or
    damaged run): those are still read, and numbered after the last planned turn."""
    extra = [msgspec.structs.replace(RECORD.steps[-1], step=name) for name in ("X", "Y")]
    history = ScenarioHistory.of(msgspec.structs.replace(RECORD, steps=[*RECORD.steps, *extra]), FACT)
    assert [s.first_turn for s in history.steps] == [1, 2, 3, 4, 4]
