"""The witness as a key-requiring endpoint (`--require-api-key-env`), over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

KEY = "sk-witness-test-key"


@pytest.fixture
def keyed_witness():
    process = subprocess.Popen(
        [sys.executable, "-m", "handoff.witness", "--require-api-key-env", "WITNESS_KEY"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "WITNESS_KEY": KEY},
    )
    line = process.stdout.readline().strip()
    assert line.startswith("Listening: http://")
    yield line.removeprefix("Listening: ")
    process.terminate()
    process.wait(timeout=10)


def _post(url: str, authorization: str | None):
    body = {"model": "m", "messages": [{"role": "user", "content": "Which retail segment did I say was my favourite?"}]}
    headers = {"content-type": "application/json", **({"authorization": authorization} if authorization else {})}
    request = urllib.request.Request(f"{url}/v1/chat/completions", data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_right_key_is_answered(keyed_witness):
    status, body = _post(keyed_witness, f"Bearer {KEY}")
    assert status == 200 and body["choices"][0]["message"]["content"]


@pytest.mark.parametrize("authorization, message", [
    (None, "No API key provided."),
    ("Bearer sk-wrong", "Incorrect API key provided."),
    (f"Basic {KEY}", "Incorrect API key provided."),
])
def test_a_missing_or_wrong_key_gets_an_openai_style_401(keyed_witness, authorization, message):
    status, body = _post(keyed_witness, authorization)
    assert status == 401
    assert body == {"error": {"message": message, "type": "invalid_request_error", "param": None,
                              "code": "invalid_api_key"}}


def test_models_needs_the_key_too(keyed_witness):
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{keyed_witness}/v1/models", timeout=10)
    assert refused.value.code == 401


def test_an_unset_key_variable_is_refused_at_start():
    env = {k: v for k, v in os.environ.items() if k != "WITNESS_KEY"}
    done = subprocess.run([sys.executable, "-m", "handoff.witness", "--require-api-key-env", "WITNESS_KEY"],
                          capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: --require-api-key-env WITNESS_KEY: that variable is not set or empty"
