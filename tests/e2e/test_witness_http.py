"""The witness model over real HTTP, as the runtime (or anyone) reaches it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from urllib.parse import quote

import pytest

from handoff.fact import Fact
from handoff.witness.evidence import read_evidence


@pytest.fixture
def witness(tmp_path):
    evidence = tmp_path / "evidence.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "handoff", "witness", "--evidence", str(evidence)],
        stdout=subprocess.PIPE, text=True,
    )
    while not (line := process.stdout.readline().strip()).startswith("Listening: "):
        assert line or process.poll() is None, "the witness ended before it listened"
    assert line.startswith("Listening: http://127.0.0.1:")
    yield line.removeprefix("Listening: "), evidence
    process.terminate()
    process.wait(timeout=10)


def _post(url, body, headers=None):
    request = urllib.request.Request(
        f"{url}/v1/chat/completions", data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("content-type"), response.read().decode()


def test_models_lists_the_witness(witness):
    url, _ = witness
    with urllib.request.urlopen(f"{url}/v1/models", timeout=10) as response:
        assert json.loads(response.read())["data"][0]["id"]


def test_json_and_stream_answers_come_from_the_request_only(witness):
    url, evidence = witness
    fact = Fact("Ünï 'quoted' value", "retail segment")
    told = [{"role": "user", "content": fact.remember_prompt}, {"role": "assistant", "content": "OK"},
            {"role": "user", "content": fact.question_prompt}]
    headers = {"x-handoff-scenario": "s", "x-handoff-turn": "2", "x-handoff-fact": quote(fact.stated_text)}

    kind, body = _post(url, {"model": "m", "messages": told}, headers)
    assert kind == "application/json"
    assert fact.is_in(json.loads(body)["choices"][0]["message"]["content"])

    kind, body = _post(url, {"model": "m", "stream": True, "messages": told[-1:]}, headers)
    assert kind == "text/event-stream"
    chunks = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert body.rstrip().endswith("data: [DONE]")
    assert "don't know" in text and not fact.is_in(text)  # the earlier request is not remembered

    records = read_evidence(evidence)
    assert [(r.turn, r.fact_sent, r.messages_received) for r in records] == [("2", True, 3), ("2", False, 1)]


NOBODY_CLIENT = r'''
import json, os, sys, urllib.error, urllib.request
url, headers = sys.argv[1], json.loads(sys.argv[2])
codes = []
for path, body in (("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
                   ("/_handoff/release?scenario=s&step=B&turn=1", {})):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            codes.append(response.status)
    except urllib.error.HTTPError as error:
        codes.append(error.code)
print(os.getuid(), *codes)
'''


def test_a_run_s_witness_hears_no_one_without_the_run_s_token(tmp_path):
    """As `handoff run` starts it: the token in its environment. Another local user (uid
    nobody) who reaches the port is refused and leaves no evidence; a request with the
    token is heard."""
    import os
    import pwd

    from handoff.witness.tags import RUN_HEADER, RUN_TOKEN_VARIABLE

    evidence = tmp_path / "evidence.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "handoff.witness", "--evidence", str(evidence)],
                               stdout=subprocess.PIPE, text=True, env={**os.environ, RUN_TOKEN_VARIABLE: "t0k3n"})
    try:
        url = process.stdout.readline().strip().removeprefix("Listening: ")
        tags = {"x-handoff-scenario": "s", "x-handoff-step": "B", "x-handoff-turn": "1", "content-type": "application/json"}
        nobody = pwd.getpwnam("nobody").pw_uid
        for headers in (tags, {**tags, RUN_HEADER: "guessed"}):
            # The system's Python: this one may live under a home only root can enter.
            done = subprocess.run(["/usr/bin/python3", "-I", "-c", NOBODY_CLIENT, url, json.dumps(headers)], user=nobody,
                                  capture_output=True, text=True, timeout=60, cwd="/")
            assert done.stdout.split() == [str(nobody), "403", "403"], done.stderr
        assert read_evidence(evidence) == []
        _post(url, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, {**tags, RUN_HEADER: "t0k3n"})
        assert len(read_evidence(evidence)) == 1
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize("method", ["POST", "DELETE", "GET"])
def test_a_request_with_no_route_closes_its_connection_so_its_body_is_never_read_as_the_next(witness, method):
    """Runtime 1.0.78 POSTs /models/session with a body, then GETs /models on the same
    connection: a body left unread was parsed as the next request line (a 501), and the
    model list never came."""
    import socket

    url, _ = witness
    host, port = url.removeprefix("http://").split(":")
    body = b'{"auto_mode":{"model_hints":["auto"]}}'
    pipelined = (f"{method} /models/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n").encode() + body + b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(pipelined)
        answered = b""
        while chunk := connection.recv(65536):  # until the witness closes it
            answered += chunk
    head = answered.split(b"\r\n\r\n", 1)[0].decode().lower()
    assert head.startswith("http/1.1 404") and "connection: close" in head, answered
    assert answered.count(b"HTTP/1.") == 1, answered  # the body was never answered as a request
    with urllib.request.urlopen(f"{url}/v1/models", timeout=10) as response:  # a new connection is served
        assert json.loads(response.read())["data"][0]["id"]
