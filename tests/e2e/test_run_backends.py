"""`handoff run` with a real model backend: an OpenAI-compatible endpoint started on its own
(the witness refusing requests without its key, standing in for Ollama or vLLM), reached
through the recording relay; and the Copilot service's configuration and error paths,
since this machine is offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from handoff.hosts.capability import missing_capability

pytestmark = pytest.mark.e2e

TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")
NAMESPACES = missing_capability("namespace") is None
SSH_HOSTS = missing_capability("ssh") is None


def _turns(path) -> list[dict]:
    return [turn for scenario in json.loads(path.read_text())["judgement"]["scenarios"] for turn in scenario["turns"]]


def handoff_run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "handoff", "run", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_an_openai_compatible_endpoint_through_the_relay(tmp_path, keyed_endpoint):
    url, key, endpoint_log = keyed_endpoint
    scenarios = ["cross-process", "resume-without-provider", "unknown-id"] + (["cross-machine-shared-dir"] if NAMESPACES else [])
    scenarios += ["cross-machine-ssh"] if SSH_HOSTS else []
    out = tmp_path / "run.json"
    done = handoff_run(*scenarios, "--backend", "openai-compatible", "--provider-url", url, "--model", "their-model",
                       "--api-key-env", "RUN_TEST_KEY", "--json", str(out), env={**os.environ, "RUN_TEST_KEY": key})
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(turn["scenario"], turn["step"]): turn for turn in _turns(out) if turn["kind"] == "ask"}
    # Judged as with the witness: the answer AND the relay's record of the request.
    assert rows["cross-process", "B"]["verdict"] == "kept"
    assert rows["cross-process", "B"]["evidence"] == "answer + wire"
    assert rows["unknown-id", "B"]["verdict"] == "lost"
    # The provider settings are not stored with a session: without them the turn fails,
    # with them (step C) the same session answers.
    assert (rows["resume-without-provider", "B"]["verdict"], rows["resume-without-provider", "C"]["verdict"]) == (
        "no-provider", "kept")
    if NAMESPACES:  # a simulated host reaches the endpoint on this machine's loopback through the relay
        assert rows["cross-machine-shared-dir", "B"]["verdict"] == "kept"
    if SSH_HOSTS:  # sshd passes no environment on: the key reached that worker in its spec, on stdin
        assert rows["cross-machine-ssh", "B"]["verdict"] == "kept"

    # The endpoint itself saw the model flag and the key (it answers nothing without it),
    # and none of the tool's own tags: the relay strips them.
    seen = [json.loads(line) for line in endpoint_log.read_text().splitlines()]
    assert seen and {record["model"] for record in seen} == {"their-model"}
    assert all(record["scenario"] is None and record["turn"] is None for record in seen)
    assert key not in done.stdout + done.stderr + out.read_text()


def test_a_wrong_key_stops_the_run_before_any_step(tmp_path, keyed_endpoint):
    url, key, endpoint_log = keyed_endpoint
    done = handoff_run("cross-process", "--backend", "openai-compatible", "--provider-url", url, "--model", "m",
                       "--api-key-env", "RUN_TEST_KEY", env={**os.environ, "RUN_TEST_KEY": "sk-wrong-0000"})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: the endpoint {url} refused the API key from $RUN_TEST_KEY (HTTP 401): check that variable's value (it is not shown)"
    ]
    assert not endpoint_log.exists()  # refused at the door: no completion was ever asked for


def test_an_endpoint_that_is_not_there_is_bad_input(tmp_path):
    done = handoff_run("cross-process", "--backend", "openai-compatible", "--provider-url", "http://127.0.0.1:9/v1",
                       "--model", "m", env=dict(os.environ))
    assert done.returncode == 2
    assert "error: --provider-url http://127.0.0.1:9/v1: cannot reach it" in done.stderr
    assert "Traceback" not in done.stderr


def _without_tokens() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in TOKEN_VARIABLES}


def test_copilot_without_a_token_says_how_to_provide_one():
    done = handoff_run("cross-process", "--backend", "copilot", env=_without_tokens())
    assert done.returncode == 2 and done.stdout == ""
    assert "needs a GitHub token: set COPILOT_GITHUB_TOKEN (or GH_TOKEN / GITHUB_TOKEN)" in done.stderr


def test_copilot_is_judged_on_the_answer_and_explains_a_failure(tmp_path):
    """Offline, the runtime cannot check the token; the row says why, the token is passed
    to the worker (it is scrubbed from every other run) and never printed, and simulated
    hosts are skipped because they have no route to the internet."""
    token = "github_pat_FAKE_RUN_TEST_0123456789"
    out = tmp_path / "run.json"
    done = handoff_run("cross-process", "cross-machine-shared-dir", "--backend", "copilot", "--json", str(out),
                       env={**_without_tokens(), "GH_TOKEN": token})
    assert done.returncode == 4  # the ask could not be judged: not a contradiction, not a pass
    turns = _turns(out)
    asked = next(turn for turn in turns if turn["scenario"] == "cross-process" and turn["kind"] == "ask")
    assert asked["verdict"] == "failed-loudly"  # the app was told: measured nothing, hid nothing
    assert "GitHub Copilot service" in asked["reason"] and "no longer set" not in asked["reason"]
    skipped = next(turn for turn in turns if turn["scenario"] == "cross-machine-shared-dir")
    assert skipped["verdict"] == "skipped" and "no route to the Copilot service" in skipped["reason"]
    assert token not in done.stdout + done.stderr + out.read_text()


def test_the_byok_lesson_is_one_option_away(tmp_path):
    """The default path is the Copilot API (a resume without the model keeps the
    session's); `--backend witness-byok` is BYOK, where the same steps have no model to ask
    and the provider must be passed again. The run says which path it took."""
    out = tmp_path / "run.json"
    done = handoff_run("resume-without-provider", "resupply-on-resume", "session-start-calls", "--backend",
                       "witness-byok", "--json", str(out), env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Model: the witness model as a BYOK provider" in done.stdout
    turns = _turns(out)
    asked = {(turn["scenario"], turn["step"]): turn["verdict"] for turn in turns if turn["kind"] == "ask"}
    assert (asked["resume-without-provider", "B"], asked["resume-without-provider", "C"]) == ("no-provider", "kept")
    told = [turn for turn in turns if turn["scenario"] == "resupply-on-resume" and turn["step"] == "provider-omitted"]
    assert [turn["verdict"] for turn in told] == ["failed-loudly"]
    assert json.loads(out.read_text())["record"]["options"]["backend"]["kind"] == "witness"  # stored as what ran
    # on BYOK a runtime asks the provider for its chats only: no model list, MCP server or GitHub API
    started = [turn for turn in turns if turn["scenario"] == "session-start-calls" and turn["kind"] == "ask"]
    assert [(e["name"], e["got"], e["met"]) for turn in started for e in turn["expectations"]
            if e["name"] == "service calls"] == [("service calls", "none", True)] * 2
    [calls] = [s["calls"] for s in json.loads(out.read_text())["record"]["scenarios"] if s["name"] == "session-start-calls"]
    assert calls == []


def test_a_backend_typo_is_one_line_and_exit_2():
    done = handoff_run("cross-process", "--backend", "witnes", env=dict(os.environ))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--backend witnes: choose one of witness, witness-byok, copilot, openai-compatible" in done.stderr
