"""The checker's service-calls expectation and the store-cost windows, pinned exactly
(mutmut survivors): the expectation's name, what it wants and what it got are shown as
they are, whether or not the witness saw the calls, and an ask's judgement carries it;
a fill's windows are the first and last third of its turns after the first."""

from __future__ import annotations

from handoff.checker.checks import _expected_calls, judge_scenario
from handoff.checker.store_cost import Window, cost_growth
from handoff.checker.verdicts import Expectation
from handoff.protocol import ActionDone
from handoff.runs.record import ScenarioRecord
from handoff.scenario import Step
from handoff.witness.evidence import Call
from tests.unit.test_checker_paths import FACT, FINISHED, READY, RECALLED, scenario, seen, step, turn


def call(kind: str, *, step_name: str = "B", fact_sent: bool | None = False, session_id: str | None = None) -> Call:
    return Call(at=1.0, method="POST", path=f"/{kind}", status=404, principal="alice", kind=kind, step=step_name,
                fact_sent=fact_sent, session_id=session_id)


def test_calls_the_witness_did_not_see_are_an_unjudged_service_calls_expectation_wanting_none_when_none_are_named():
    """No calls wanted shows as "none"; calls not seen show as "—" and are not judged."""
    assert _expected_calls((), None) == Expectation("service calls", "none", "—", None)
    assert _expected_calls(("mcp", "models"), None) == Expectation("service calls", "mcp, models", "—", None)


def test_calls_carrying_both_the_fact_and_a_session_id_say_both_joined_by_and():
    """The service calls expectation names what the calls carried, both joined by " and "."""
    calls = (call("models", fact_sent=True), call("github", session_id="s-1"))
    assert _expected_calls(("github", "models"), calls) == Expectation(
        "service calls", "github, models", "github, models; carrying the fact and a session id", False)


def test_calls_seen_as_named_are_a_met_service_calls_expectation():
    """Seen calls of the kinds named, carrying nothing, meet the expectation, named as such."""
    assert _expected_calls(("models",), (call("models"),)) == Expectation("service calls", "models", "models", True)
    assert _expected_calls((), ()) == Expectation("service calls", "none", "none", True)


def test_an_ask_whose_step_names_its_calls_is_judged_against_the_calls_the_witness_saw():
    """A step naming its service calls gets that expectation in its ask's judgement,
    judged on the calls its own runtime made."""
    spec = Step("B", ("resume", "ask"), expect="kept", calls=("models",))
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), FINISHED)],
                            [seen("B", 1, True)], calls=[call("models")])
    [judged] = judge_scenario(record, FACT).turns
    assert judged.expectations == (Expectation("verdict", "kept", "kept", True),
                                   Expectation("service calls", "models", "models", True))
    told = ScenarioRecord("s", scenario(spec), [step("B", READY, turn(1, "ask", RECALLED), FINISHED)],
                          [seen("B", 1, True)], calls=[call("models", fact_sent=True)])
    assert judge_scenario(told, FACT).turns[0].expectations[1] == Expectation(
        "service calls", "models", "models; carrying the fact", False)


def test_a_fill_of_five_turns_compares_its_second_turn_with_its_fifth():
    """After the first turn is left out four remain: thirds of one turn each, the second
    and the fifth."""
    fill = ActionDone(t=0.0, action="fill", session_id="x", ms=1, turns=5, store_given=(1, 10, 100, 1000, 10000),
                      store_written=(2, 20, 200, 2000, 20000), store_written_is="bytes counted")
    cost = cost_growth([fill])
    assert (cost.early, cost.late) == (Window(2, 2, 10, 20), Window(5, 5, 10000, 20000))
