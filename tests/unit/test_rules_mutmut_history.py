"""Rules of how a scenario's calls to the service (besides its chats) are read into its
steps' histories (handoff/runs/history.py) that other tests leave open:

* each step gets the calls its token made, and only those: not another step's, not a
  call made with no step's token;
* they are kept in the order they were made (by time), whatever order the record holds
  them in.
"""

from __future__ import annotations

from handoff.runs.history import ScenarioHistory
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Call
from tests.unit.test_html_report import FACT


def call(at: float, step: str | None, kind: str = "models") -> Call:
    return Call(at=at, method="GET", path=f"/{kind}", status=200, principal="alice", kind=kind, step=step)


def test_each_step_gets_its_own_calls_in_the_order_they_were_made_and_none_without_a_step():
    scenario = Scenario("s", "T", "P", "D", (Step("A", ("create",)), Step("B", ("resume",))))
    steps = [StepRecord(name, "local", "shared", "home", "x", lines=[]) for name in ("A", "B")]
    late, early, middle = call(3.0, "A", "github"), call(1.0, "A", "models"), call(2.0, "A", "mcp")
    other, stepless = call(0.5, "B"), call(0.7, None)
    record = ScenarioRecord("s", scenario, steps, [], calls=[late, stepless, early, other, middle])
    first, second = ScenarioHistory.of(record, FACT).steps
    assert first.calls == (early, middle, late)
    assert second.calls == (other,)


def test_a_step_with_one_call_gets_that_call():
    scenario = Scenario("s", "T", "P", "D", (Step("A", ("create",)),))
    step = StepRecord("A", "local", "shared", "home", "x", lines=[])
    only = call(1.0, "A")
    [history] = ScenarioHistory.of(ScenarioRecord("s", scenario, [step], [], calls=[only]), FACT).steps
    assert history.calls == (only,)
