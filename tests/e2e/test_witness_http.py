"""The witness model over real HTTP, as the runtime (or anyone) reaches it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from urllib.parse import quote

import pytest

from handoff.fact import Fact
from handoff.witness.server import read_evidence


@pytest.fixture
def witness(tmp_path):
    evidence = tmp_path / "evidence.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "handoff", "witness", "--evidence", str(evidence)],
        stdout=subprocess.PIPE, text=True,
    )
    line = process.stdout.readline().strip()
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
