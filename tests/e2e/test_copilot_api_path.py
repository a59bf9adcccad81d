"""The default matrix runs on the lab's path: the witness as the GitHub Copilot API, each
step's runtime sending a token the run's witness issued to that step
(coordinator/credentials.py). The verdicts are the scenario files' for this path (every
rung: test_ladder.py), and the evidence still names the step and principal behind every
request: those the app tagged, and those the runtime sends on its own (a compaction's
carries none of the app's headers). `--backend witness-byok`: test_run_backends.py."""

from __future__ import annotations

import pytest

from handoff.protocol import COPILOT_API_PATH
from handoff.witness.tags import COMPACTION
from handoff.words import Verdict

pytestmark = pytest.mark.e2e


@pytest.fixture
def on_the_api(matrix):
    assert matrix.record.options.backend.path == COPILOT_API_PATH  # the default path
    return matrix


def test_a_resume_without_the_model_keeps_the_session_s_on_this_path(on_the_api):
    without, again = on_the_api.asked("resume-without-provider")
    assert without.step.step == "B" and without.verdict == Verdict.KEPT  # on BYOK: no-provider
    assert again.verdict == Verdict.KEPT
    [b] = [s for s in on_the_api.scenario("resume-without-provider").scenario.steps if s.name == "B"]
    assert b.expect == Verdict.KEPT  # the run stored the scenario as this path judges it


def test_every_request_is_attributed_to_its_step_and_principal_by_its_token(on_the_api):
    """Of every rung: on every kind of host, through the Node.js worker too."""
    for name in [ran.name for ran in on_the_api.record.scenarios if not ran.skipped]:
        seen = on_the_api.scenario(name).evidence
        planned = {step.name: step.principal for step in on_the_api.scenario(name).scenario.steps}
        assert seen and all(e.scenario == name and e.step in planned for e in seen), name
        assert all(e.principal == planned[e.step] for e in seen), name
    assert {e.principal for e in on_the_api.scenario("foreign-principal").evidence} == {"alice", "bob"}
    compactions = [e for e in on_the_api.scenario("compaction-tool-fact-dropped").evidence
                   if e.interaction == COMPACTION]
    assert compactions and all(e.step == "A" and e.fact_sent is not None for e in compactions)


@pytest.mark.parametrize("rung", ["token-second-token", "token-second-token-host"])
def test_a_second_token_lists_reads_and_resumes_the_first_token_s_session(on_the_api, rung):
    """token-second-token: bob's token sees alice's session, her first message as its
    summary, and gets answered from her history; the guard refuses him. -host: the same
    with bob on another host, through the database store both hosts' runtimes use, where
    his runtime neither lists the session nor reads its metadata (its home has neither):
    he resumes it by id alone."""
    steps = on_the_api.steps(rung)
    alice_session = steps["alice"].reported_session_id
    done = {action.action: action for action in steps["bob-raw"].actions}
    if rung == "token-second-token":
        assert alice_session in done["list"].listed
        assert done["metadata"].found is True and done["metadata"].summary == on_the_api.fact.remember_prompt
    else:
        assert done["list"].listed == () and done["metadata"].found is False
    evidence = on_the_api.scenario(rung).evidence
    assert {e.principal for e in evidence if e.step == "alice"} == {"alice"}
    [resumed] = [e for e in evidence if e.step == "bob-raw"]
    assert resumed.principal == "bob" and resumed.fact_sent is True
    assert not [e for e in evidence if e.step == "bob-guarded"]
    raw, guarded = on_the_api.asked(rung)
    assert (raw.verdict, guarded.verdict) == (Verdict.KEPT, Verdict.REFUSED)


def test_a_session_start_asks_the_service_for_more_than_the_chat_and_tells_it_nothing_of_the_session(on_the_api):
    """session-start-calls: each process's runtime asks for the model list, opens the
    GitHub MCP server and asks the GitHub API, each call with the step's token; none
    carries the fact or the session's id, which the chats do."""
    record = next(s for s in on_the_api.record.scenarios if s.name == "session-start-calls")
    steps = {step.step for step in record.steps}
    assert {call.step for call in record.calls} == steps  # every call is its token's step's
    for step in steps:
        mine = [call for call in record.calls if call.step == step]
        assert {call.kind for call in mine} == {"models", "mcp", "github"}, step
        assert {call.principal for call in mine} == {"alice"}
        assert ("server/discover" in {m for call in mine for m in call.rpc})
        assert not any(call.fact_sent or call.session_id for call in mine)
    chats = [e for e in record.evidence if e.step in steps]
    assert chats and all(e.session_id for e in chats)  # the chats name the session; the calls do not
    machines = {call.machine for call in record.calls if call.kind == "models"}
    assert len(machines) == 1 and None not in machines  # two processes of one machine: one machine id
    for turn in on_the_api.asked("session-start-calls"):
        [calls] = [e for e in turn.expectations if e.name == "service calls"]
        assert (calls.wanted, calls.got, calls.met) == ("github, mcp, models", "github, mcp, models", True)
