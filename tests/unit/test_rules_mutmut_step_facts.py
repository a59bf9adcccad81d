"""Rule of a step's facts (handoff/checker/checks.py step_facts) that other tests leave
open: unless told otherwise, the witness is taken to have stood where the runtime's calls
to the service go, so the step's facts carry the calls it saw (not None, "not seen")."""

from __future__ import annotations

from handoff.checker.checks import step_facts
from handoff.runs.history import ScenarioHistory
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Call
from tests.unit.test_html_report import FACT


def test_by_default_a_step_s_facts_carry_the_calls_the_witness_saw():
    spec = Step("A", ("create",))
    scenario = Scenario("s", "T", "P", "D", (spec,))
    step = StepRecord("A", "local", "shared", "home", "x", lines=[])
    seen = Call(at=1.0, method="GET", path="/models", status=200, principal="alice", kind="models", step="A")
    [history] = ScenarioHistory.of(ScenarioRecord("s", scenario, [step], [], calls=[seen]), FACT).steps
    assert step_facts(history, spec).calls == (seen,)
    assert step_facts(history, spec, calls_seen=False).calls is None
