"""A run's witness on the Copilot-API path issues a token to each step (control.py,
server.py): every request carrying it is read with that step's tags and recorded as its
principal's, whatever headers the request has of its own (the runtime's compaction
request carries none). Over HTTP, against a real witness server in this process."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request

import pytest

from handoff.fact import Fact
from handoff.witness.control import WitnessControl
from handoff.witness.evidence import read_evidence
from handoff.witness.server import make_server
from handoff.witness.tags import COMPACTION, INTERACTION_HEADER, TAG_HEADERS, request_tags

RUN_TOKEN = "run-secret"
FACT = Fact()


@pytest.fixture
def witness(tmp_path):
    evidence = tmp_path / "evidence.jsonl"
    served = make_server("127.0.0.1", 0, evidence, run_token=RUN_TOKEN)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{served.server_address[1]}", evidence
    served.shutdown()
    served.server_close()


def chat(url: str, token: str, prompt: str, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(f"{url}/chat/completions", json.dumps(
        {"messages": [{"role": "user", "content": prompt}]}).encode(),
        {"content-type": "application/json", "authorization": f"Bearer {token}", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_step_s_requests_are_read_with_its_tags_even_when_they_carry_none(witness):
    url, evidence = witness
    control = WitnessControl(url, RUN_TOKEN)
    tags = request_tags("compaction-tool-fact-kept", "A", "local", FACT)
    token = asyncio.run(control.issue("bob", tags))
    other = asyncio.run(control.issue("alice", request_tags("cross-process", "B", "host-b", FACT)))
    assert token != other and token.startswith("gho_")

    assert chat(url, token, FACT.remember_prompt, {INTERACTION_HEADER: COMPACTION}) == 200  # no tag of its own
    assert chat(url, token, "Which one?", {TAG_HEADERS["step"]: "B", TAG_HEADERS["scenario"]: "cross-process",
                                           TAG_HEADERS["turn"]: "2"}) == 200  # tags that are not its step's
    first, second = read_evidence(evidence)
    for seen in (first, second):
        assert (seen.scenario, seen.step, seen.host, seen.principal) == ("compaction-tool-fact-kept", "A", "local", "bob")
    assert first.fact_sent is True and first.interaction == COMPACTION  # the step's fact, looked for in it
    assert second.turn == "2"  # the turn is the request's own: a step has many


def test_only_the_run_s_coordinator_has_tokens_issued_and_only_issued_tokens_are_heard(witness, tmp_path):
    url, evidence = witness
    with pytest.raises(urllib.error.HTTPError) as refused:
        asyncio.run(WitnessControl(url, "not-the-run").issue("mallory", {}))
    assert refused.value.code == 403
    issued = asyncio.run(WitnessControl(url, RUN_TOKEN).issue("alice", {}))
    assert chat(url, "gho_" + "0" * 36, "hi") == 401 and chat(url, issued, "hi") == 200
    for bad in ({"principal": ""}, {"tags": [1]}, {"tags": {"x": 1}}):
        request = urllib.request.Request(f"{url}/_handoff/issue?principal={bad.get('principal', 'a')}",
                                         json.dumps(bad.get("tags", {})).encode(), {"x-handoff-run": RUN_TOKEN})
        with pytest.raises(urllib.error.HTTPError) as wrong:
            urllib.request.urlopen(request, timeout=10)
        assert wrong.value.code == 400

    lone = make_server("127.0.0.1", 0, None)  # `handoff witness`: it serves no run, so it issues nothing
    thread = threading.Thread(target=lone.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(urllib.error.HTTPError) as none:
            asyncio.run(WitnessControl(f"http://127.0.0.1:{lone.server_address[1]}").issue("alice", {}))
        assert none.value.code == 403
    finally:
        lone.shutdown()
        lone.server_close()
