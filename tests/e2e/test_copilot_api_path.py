"""Rungs run on the lab's path: the witness as the GitHub Copilot API, each step's runtime
sending a token the run's witness issued to that step (coordinator/credentials.py). The
verdicts are the scenario files' for this path, and the evidence still names the step
and principal behind every request: those the app tagged, and those the runtime sends
on its own (a compaction's carries none of the app's headers)."""

from __future__ import annotations

import pytest

from handoff import scenario_files
from handoff.protocol import COPILOT_API_PATH, WITNESS_COPILOT_API, Backend
from handoff.witness.copilot_api import MODELS
from handoff.witness.tags import COMPACTION
from handoff.words import Verdict
from tests.e2e.conftest import run_scenarios

pytestmark = pytest.mark.e2e
NAMES = ["cross-process", "resume-without-provider", "compaction-tool-fact-dropped", "foreign-principal",
         "cross-sdk-python-to-node", "cross-sdk-node-to-python"]


@pytest.fixture(scope="module")
def on_the_api():
    return run_scenarios(scenario_files.select(NAMES), backend=Backend(WITNESS_COPILOT_API, MODELS[0]), jobs=2)


def test_every_rung_comes_out_as_its_file_expects_on_this_path(on_the_api):
    assert on_the_api.record.options.backend.path == COPILOT_API_PATH
    for name in NAMES:
        judged = [turn for turn in on_the_api.turns(name) if turn.expectations]
        assert judged and all(turn.as_expected for turn in judged), [(t.scenario, t.turn, t.verdict) for t in judged]
    assert on_the_api.judgement.exit_code() == 0


def test_a_resume_without_the_model_keeps_the_session_s_on_this_path(on_the_api):
    without, again = on_the_api.asked("resume-without-provider")
    assert without.step.step == "B" and without.verdict == Verdict.KEPT  # on BYOK: no-provider
    assert again.verdict == Verdict.KEPT
    [b] = [s for s in on_the_api.scenario("resume-without-provider").scenario.steps if s.name == "B"]
    assert b.expect == Verdict.KEPT  # the run stored the scenario as this path judges it


def test_every_request_is_attributed_to_its_step_and_principal_by_its_token(on_the_api):
    for name in NAMES:
        seen = on_the_api.scenario(name).evidence
        planned = {step.name: step.principal for step in on_the_api.scenario(name).scenario.steps}
        assert seen and all(e.scenario == name and e.step in planned for e in seen), name
        assert all(e.principal == planned[e.step] for e in seen), name
    assert {e.principal for e in on_the_api.scenario("foreign-principal").evidence} == {"alice", "bob"}
    compactions = [e for e in on_the_api.scenario("compaction-tool-fact-dropped").evidence
                   if e.interaction == COMPACTION]
    assert compactions and all(e.step == "A" and e.fact_sent is not None for e in compactions)
