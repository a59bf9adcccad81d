"""The witness as the GitHub Copilot service (handoff/witness/copilot_api.py): a client
shaped like the lab's sample, which imports nothing of the tool, runs offline against it
with the real runtime, and the evidence names whose token sent every request."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from handoff.fact import Fact
from handoff.hosts.base import SCRUBBED_ENV, USER_DIRS
from handoff.runtime_locator import locate_runtime
from handoff.witness import copilot_api
from handoff.witness.evidence import read_calls, read_evidence
from handoff.witness.server import make_server

pytestmark = pytest.mark.e2e

CLIENT = Path(__file__).parent / "clients" / "lab_shaped.py"
RUN_SECONDS = 120  # a bound for a hung client, not a pace


@pytest.fixture
def witness(tmp_path):
    """The witness serving both APIs, with one token per principal."""
    tokens = copilot_api.issue()
    evidence = tmp_path / "evidence.jsonl"
    server = make_server("127.0.0.1", 0, evidence, tokens=tokens)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", {name: token for token, name in tokens.items()}, evidence
    finally:
        server.shutdown()
        server.server_close()


def _client(url: str, token: str, home: Path, *args: str) -> subprocess.CompletedProcess:
    """The client as a learner runs it: everything it needs from the environment, as
    `handoff witness` prints it, with a home of its own."""
    environment = {key: value for key, value in os.environ.items() if key not in SCRUBBED_ENV}
    environment.update(COPILOT_CLI_PATH=str(locate_runtime()), COPILOT_API_URL=url,
                       COPILOT_DEBUG_GITHUB_API_URL=url, COPILOT_GITHUB_TOKEN=token, HOME=str(home),
                       XDG_CACHE_HOME=str(USER_DIRS / "local" / ".cache"))  # the runtime unpacked once, not per test
    return subprocess.run([sys.executable, str(CLIENT), *args], capture_output=True, text=True, env=environment,
                          timeout=RUN_SECONDS)


def test_a_lab_shaped_client_creates_as_one_principal_and_another_resumes_with_no_model(witness, tmp_path):
    url, token_of, evidence = witness
    fact = Fact(f"Loyal {secrets.token_hex(2)}", "retail segment")  # any fact, never one the witness knows
    session_id = f"lab-{secrets.token_hex(4)}"
    home = tmp_path / "home"

    told = _client(url, token_of["alice"], home, "create", session_id, fact.remember_prompt)
    assert told.returncode == 0, told.stderr[-2000:]
    assert "Models: auto, claude-haiku-4.5, gpt-5-mini" in told.stdout
    assert "Model: claude-haiku-4.5" in told.stdout
    asked = _client(url, token_of["bob"], home, "resume", session_id, fact.question_prompt)
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert fact.is_in(asked.stdout), asked.stdout

    chats = read_evidence(evidence)
    assert [(chat.principal, chat.session_id, chat.model) for chat in chats] == [
        ("alice", session_id, "claude-haiku-4.5"), ("bob", session_id, "claude-haiku-4.5")]  # the resume kept its model
    assert fact.is_in(chats[1].reply)
    calls = read_calls(evidence)
    assert {(call.path, call.status) for call in calls if call.principal == "bob"} >= {("/models", 200)}
    assert all(call.status != 401 for call in calls)
    assert all(call.path != "/chat/completions" for call in calls)  # chats are evidence, not calls


def test_a_token_the_witness_did_not_issue_is_refused_and_leaves_no_chat(witness, tmp_path):
    url, _, evidence = witness
    stranger = f"{copilot_api.TOKEN_PREFIX}{secrets.token_hex(18)}"
    done = _client(url, stranger, tmp_path / "home", "create", f"lab-{secrets.token_hex(4)}", "Reply with just OK.")
    assert done.returncode != 0
    assert read_evidence(evidence) == []
    refused = read_calls(evidence)
    assert refused and all((call.status, call.principal) == (401, None) for call in refused)


def _started(evidence: Path, *options: str) -> tuple[subprocess.Popen, list[str]]:
    """`handoff witness`, and the lines it printed before it listened."""
    witness = subprocess.Popen([sys.executable, "-m", "handoff", "witness", "--evidence", str(evidence), *options],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    printed = []
    while not (line := witness.stdout.readline()).startswith("Listening: "):
        if not line:
            witness.kill()
            pytest.fail(f"the witness ended before it listened: {witness.communicate()[1]}")
        printed.append(line)
    return witness, printed


def _sourced(lines: str, home: Path, *args: str) -> subprocess.CompletedProcess:
    """The client run as a learner runs it: the printed lines pasted into a shell first."""
    environment = {key: value for key, value in os.environ.items() if key not in SCRUBBED_ENV and key != "COPILOT_CLI_PATH"}
    environment.update(HOME=str(home), XDG_CACHE_HOME=str(USER_DIRS / "local" / ".cache"))
    return subprocess.run(["bash", "-c", f'{lines}\nexec "$0" "$@"', sys.executable, str(CLIENT), *args],
                          capture_output=True, text=True, env=environment, timeout=RUN_SECONDS)


def test_the_lines_handoff_witness_prints_run_an_unmodified_app_and_ctrl_c_says_what_it_saw(tmp_path):
    evidence = tmp_path / "evidence.jsonl"
    witness, printed = _started(evidence)
    fact = Fact(f"Dormant {secrets.token_hex(2)}", "retail segment")
    session_id = f"lab-{secrets.token_hex(4)}"
    try:
        assert [line.split("=")[0] for line in printed[:5]] == [
            "export COPILOT_CLI_PATH", "export COPILOT_API_URL", "export COPILOT_DEBUG_GITHUB_API_URL",
            "export COPILOT_GITHUB_TOKEN", "# export COPILOT_GITHUB_TOKEN"]
        first = "".join(printed)
        second = "".join(line.removeprefix("# ") if line.startswith("# export ") else line for line in printed)
        told = _sourced(first, tmp_path / "home", "create", session_id, fact.remember_prompt)
        assert told.returncode == 0, told.stderr[-2000:]
        asked = _sourced(second, tmp_path / "home", "resume", session_id, fact.question_prompt)
        assert asked.returncode == 0, asked.stderr[-2000:]
        assert fact.is_in(asked.stdout)
    finally:
        witness.send_signal(signal.SIGINT)
        said, _ = witness.communicate(timeout=30)
    assert witness.returncode == 0
    assert [chat.principal for chat in read_evidence(evidence)] == ["alice", "bob"]
    summary = said.strip().splitlines()
    assert summary[0].startswith("Seen: alice ") and "(1 chat), bob " in summary[0] and "refused" not in summary[0]
    assert summary[1] == f"Fact '{fact.value}' (favourite {fact.topic}): in the chats of alice 1, bob 1."


def test_a_port_in_use_is_one_line_and_exit_2():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = subprocess.run([sys.executable, "-m", "handoff", "witness", "--port", str(taken.getsockname()[1])],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "cannot listen on 127.0.0.1:" in done.stderr


def _raw(url: str, request: bytes) -> bytes:
    """What the witness answers a request written by hand, the connection read to its end."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def test_a_stranger_s_request_is_refused_unread_and_no_body_is_read_beyond_its_bound(witness):
    """A request with a token the witness did not issue is answered 401 before its body is
    read (it claims 10**15 bytes here, and sends none), and an issued token's request that
    claims more than any request is gets 413, also unread: neither costs the witness memory."""
    url, token_of, evidence = witness
    huge = b"Content-Length: 1000000000000000\r\nConnection: close\r\n\r\n"
    stranger = _raw(url, b"POST /chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer gho_nobody\r\n" + huge)
    assert stranger.startswith(b"HTTP/1.1 401")
    issued = _raw(url, f"POST /chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token_of['bob']}\r\n"
                  .encode() + huge)
    assert issued.startswith(b"HTTP/1.1 413")
    assert [(call.status, call.principal) for call in read_calls(evidence)] == [(401, None), (413, "bob")]
    assert read_evidence(evidence) == []


def test_a_witness_that_issued_no_token_has_no_copilot_api(tmp_path):
    """A run's witness (BYOK) answers the Copilot API's paths as any path it does not serve."""
    server = make_server("127.0.0.1", 0, tmp_path / "evidence.jsonl", run_token="run-secret")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        answer = _raw(url, b"GET /models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 403")  # not the run's: no trace
        assert not (tmp_path / "evidence.jsonl").exists()
    finally:
        server.shutdown()
        server.server_close()
