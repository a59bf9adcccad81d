"""What the witness keeps of a request to the Copilot service that is no chat
(witness/calls.py): the step its token was issued to, the session it names, the JSON-RPC
methods of an MCP request, whether the step's fact was in its body (gzip'd too), and the
names, never the values, of its headers. Over HTTP, against a real witness server."""

from __future__ import annotations

import gzip
import json
import threading
import urllib.error
import urllib.request

import pytest

from handoff.fact import Fact
from handoff.witness import calls, copilot_api
from handoff.witness.evidence import read_calls
from handoff.witness.server import make_server
from handoff.witness.tags import SESSION_HEADER, request_tags

FACT = Fact()
TAGS = request_tags("session-start-calls", "A", "local", FACT)


@pytest.fixture
def witness(tmp_path):
    token = copilot_api.new_token()
    evidence = tmp_path / "evidence.jsonl"
    served = make_server("127.0.0.1", 0, evidence, tokens={token: copilot_api.Holder("alice", tuple(TAGS.items()))})
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{served.server_address[1]}", token, evidence
    served.shutdown()
    served.server_close()


def send(url: str, path: str, token: str, body: bytes | None = None, headers: dict[str, str] | None = None,
         method: str = "POST") -> int:
    request = urllib.request.Request(f"{url}{path}", body, {"authorization": f"Bearer {token}", **(headers or {})},
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_call_is_its_token_s_step_and_says_what_it_carried(witness):
    url, token, evidence = witness
    discover = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}).encode()
    batch = json.dumps([{"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]).encode()
    told = gzip.compress(json.dumps({"events": [FACT.remember_prompt]}).encode())
    assert send(url, "/mcp/readonly", token, discover, {SESSION_HEADER: "s-1", "content-type": "application/json"}) == 404
    assert send(url, "/mcp/readonly", token, batch) == 404
    assert send(url, "/models", token, headers={calls.MACHINE_HEADER: "machine-one"}, method="GET") == 200
    assert send(url, "/telemetry/telemetry", token, told, {"content-encoding": "gzip"}) == 404
    assert send(url, "/models", copilot_api.new_token(), method="GET") == 401  # not issued: no step, no body read
    mcp, batched, listed, telemetry, stranger = read_calls(evidence)
    assert (mcp.kind, mcp.step, mcp.scenario, mcp.principal, mcp.session_id, mcp.rpc) == (
        "mcp", "A", "session-start-calls", "alice", "s-1", ("server/discover",))
    assert batched.rpc == ("notifications/initialized", "tools/list") and batched.session_id is None
    assert mcp.fact_sent is False and listed.kind == "models" and listed.status == 200
    assert listed.machine == calls.fingerprint("machine-one") != calls.fingerprint("machine-two") and mcp.machine is None
    assert telemetry.kind == "github" and telemetry.fact_sent is True  # found in the gzip'd body
    assert (stranger.principal, stranger.step, stranger.fact_sent, stranger.status) == (None, None, None, 401)
    assert "authorization" in mcp.headers and SESSION_HEADER in mcp.headers
    assert token not in evidence.read_text() and "machine-one" not in evidence.read_text()  # names, never values


@pytest.mark.parametrize("body, methods", [(b"", ()), (b"not json", ()), (b'{"id": 1}', ()), (b'[1, {"method": 2}]', ()),
                                           (b'{"method": "initialize"}', ("initialize",))])
def test_only_json_rpc_methods_are_read_as_such(body, methods):
    assert calls.rpc_methods(body.decode()) == methods


def test_a_gzip_body_is_opened_only_so_far():
    huge = gzip.compress(b"x" * (calls.MAX_OPENED + 10) + FACT.stated_text.encode())
    call = calls.observed("POST", "/telemetry/telemetry", "github", 404,
                          copilot_api.Holder("alice", tuple(TAGS.items())), {"content-encoding": "gzip"}, huge)
    assert call.fact_sent is False and call.body_bytes == len(huge)
