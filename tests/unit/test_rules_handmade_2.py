"""Rules that hand-made mutants (tools/handmade_mutants.py) showed the suite left open, one
test each:

* the checker: a worker that timed out is judged on its time-out before any stray lines it
  wrote; a store that was out is an outage even when its message also says "not found";
  a step's service calls are matched as the stored run writes their kinds;
* silent losses: only a tell the app saw succeed (no verdict of its own) can be found
  lost later; one the app was told failed keeps its verdict;
* the event log's conversation holds only user and assistant messages, their types
  matched as written;
* the fence: a writer is the lease's holder only under the very name the registry holds;
* `handoff diff`: two paths named differently are apart even when they differ only in
  case; whether a verdict held is taken from the same turn's match, scenario and step
  names matched as written.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from handoff.checker.checks import _expected_calls
from handoff.checker.losses import mark_silent_losses
from handoff.checker.verdicts import Basis, Expectation, RunJudgement, ScenarioJudgement
from handoff.eventlog import messages
from handoff.report.diff import render
from handoff.stores.database import connect
from handoff.words import Verdict
from tests.unit.test_checks import FINISHED, asked, error
from tests.unit.test_diff import KEPT, run
from tests.unit.test_rules_losses import _ask, _created, _resumed, _tell
from tests.unit.test_rules_mutmut_checker import call


def test_a_worker_that_timed_out_is_judged_on_its_time_out_even_when_it_also_wrote_stray_lines():
    row = asked("this is not a protocol line", timed_out=True)
    assert (row.verdict, row.reason, row.evidence) == (
        Verdict.UNKNOWN, "worker timed out before answering", Basis.NOTHING)


def test_a_store_that_was_out_is_an_outage_even_when_its_message_also_says_not_found():
    row = asked(error("resume", "Session not found: connection refused"), FINISHED)
    assert (row.verdict, row.reason, row.evidence) == (
        Verdict.FAILED_LOUDLY, "resume failed, the store was out: Session not found: connection refused",
        Basis.RUNTIME_ERROR)


def test_service_calls_are_matched_as_the_stored_run_writes_their_kinds():
    """A call of kind "Models" is not the "models" the step names."""
    assert _expected_calls(("models",), (call("Models"),)) == Expectation("service calls", "models", "Models", False)


def test_a_tell_the_app_was_told_failed_is_never_found_lost_silently_by_a_later_ask():
    """Its fact reached the model, and a resumed ask was answered without it; but the app
    knew the tell failed, so it keeps its own verdict."""
    failed = _tell(_created("A"), 1, verdict=Verdict.FAILED_LOUDLY, evidence=Basis.RUNTIME_ERROR)
    lost_ask = _ask(_resumed("B"), 2, answer="I don't know", verdict=Verdict.LOST, evidence=Basis.ANSWER_ONLY)
    assert mark_silent_losses([failed, lost_ask], {}) == [failed, lost_ask]


def test_the_conversation_in_a_log_leaves_out_events_of_other_types_even_with_content():
    events = [{"type": "user.message", "data": {"content": "hi"}},
              {"type": "tool.execution_complete", "data": {"content": "tool output"}},
              {"type": "assistant.message", "data": {"content": "hello"}}]
    assert messages(events) == [("user", "hi"), ("assistant", "hello")]


def test_a_user_message_type_is_matched_as_written():
    assert messages([{"type": "User.Message", "data": {"content": "hi"}}]) == []


def test_an_assistant_message_type_is_matched_as_written():
    assert messages([{"type": "Assistant.Message", "data": {"content": "hello"}}]) == []


def test_the_fence_refuses_a_writer_whose_name_differs_from_the_lease_s_holder_only_in_case(tmp_path):
    from handoff.guard.fence import Fence, Superseded
    from handoff.stores.registry import Registry

    registry = Registry(connect(f"sqlite:///{tmp_path / 'registry.db'}"))
    assert registry.take_lease("s", "First", 3.0, now=0.0)
    Fence(registry, "s", "First").check("append_file(/x)")
    with pytest.raises(Superseded) as refused:
        Fence(registry, "s", "first").check("append_file(/x)")
    assert str(refused.value) == "this writer no longer holds the session's lease: append_file(/x) refused, nothing written"


def test_runs_whose_paths_differ_only_in_case_took_different_paths():
    assert render(run("run-a", KEPT), run("run-b", KEPT), paths=("SDK", "sdk")) == (
        "The two runs took different paths to the model: run-a the SDK path, run-b the sdk one: a verdict\n"
        "they differ in may be the path's doing.\n"
        "\n"
        "run-a -> run-b: no turn differs in verdict or evidence (1 turn compared)")


def test_whether_a_verdict_held_is_told_only_from_the_same_turn_s_match():
    """Turn 2's match changed; turn 3 expects nothing, so its line says no more than its
    verdicts."""
    unexpected = replace(KEPT, verdict=Verdict.LOST, expectations=(Expectation("verdict", "kept", "lost", False),))
    third = replace(KEPT, turn=3, expectations=())
    assert render(run("run-a", KEPT, third), run("run-b", unexpected, replace(third, verdict=Verdict.LOST))) == (
        "run-a -> run-b: 2 verdicts changed, 0 other differences\n"
        "\n"
        "s turn 2 (B, ask): kept → lost, as expected → NOT as expected\n"
        "s turn 3 (B, ask): kept → lost")


def test_whether_a_verdict_held_is_not_taken_from_a_scenario_whose_name_differs_only_in_case():
    def two(run_id, upper, lower):
        return RunJudgement(run_id, "At Risk", (ScenarioJudgement("Alpha", "T", "P", "D", 1.0, (upper,)),
                                                ScenarioJudgement("alpha", "T", "P", "D", 1.0, (lower,))))

    upper = replace(KEPT, scenario="Alpha")
    lower = replace(KEPT, scenario="alpha", expectations=())
    unexpected = replace(upper, verdict=Verdict.LOST, expectations=(Expectation("verdict", "kept", "lost", False),))
    assert render(two("run-a", upper, lower), two("run-b", unexpected, replace(lower, verdict=Verdict.LOST))) == (
        "run-a -> run-b: 2 verdicts changed, 0 other differences\n"
        "\n"
        "Alpha turn 2 (B, ask): kept → lost, as expected → NOT as expected\n"
        "alpha turn 2 (B, ask): kept → lost")


def test_a_session_not_found_is_lost_even_when_the_message_also_says_no_token():
    """The not-found check comes before the no-provider one: a session that is gone is
    lost, whatever else the runtime's message says about its token."""
    message = "Session not found; no GitHub OAuth token or Copilot HMAC key"
    row = asked(error("resume", message), FINISHED)
    assert (row.verdict, row.reason, row.evidence) == (Verdict.LOST, f"resume failed: {message}", Basis.RUNTIME_ERROR)


def test_detect_secrets_detectors_are_each_named_by_what_they_find_beside_their_finder():
    """Called afresh (not from the cache a first use fills), so this test is one that runs
    the lines that pair a secret's type with its detector."""
    from handoff.guard import ids

    detectors, random_looking = ids._detect_secrets.__wrapped__()
    named = dict(detectors)
    assert all(isinstance(kind, str) and callable(find) for kind, find in detectors)
    assert list(named["AWS Access Key"]("key AKIAIOSFODNN7EXAMPLE here"))
    assert not list(named["AWS Access Key"]("nothing here"))
    assert list(random_looking("x " + "Zk9vQmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg==" + " y"))
