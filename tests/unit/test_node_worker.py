"""The Node.js worker's pure parts say what the Python worker's say: the prompts that carry
the fact (the witness recognises only these sentences) and the `eventlog` summary of a
session's log (the checker's third kind of evidence). And a spec it cannot read is one
`error` event of the protocol, not a crash. No runtime starts here: the worker's
conformance with a real runtime is tests/e2e/test_node_worker.py's."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess

import msgspec
import pytest

from handoff.eventlog import report
from handoff.fact import Fact
from handoff.protocol import ActionFailed, decode
from handoff.runtime_locator import PROJECT_ROOT

NODE_WORKER = PROJECT_ROOT / "sdks" / "node"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (the Node.js worker needs Node.js 20+)")


def node_eval(script: str, stdin: str = "") -> str:
    """What an ES module script run by node in sdks/node/ prints."""
    done = subprocess.run([NODE, "--input-type=module", "-e", script], cwd=NODE_WORKER, input=stdin,
                          capture_output=True, text=True, timeout=30, check=True)
    return done.stdout


VALUES = ["At Risk", "O'Brien", "back\\slash", "quote ' and \\' both", "Zürich ☕"]


def test_the_prompts_are_the_python_workers_byte_for_byte():
    script = ("import { rememberPrompt, questionPrompt } from './fact.mjs';"
              "const values = JSON.parse(process.argv.at(-1));"
              "console.log(JSON.stringify(values.map(v => [rememberPrompt('retail segment', v), "
              "questionPrompt('retail segment')])));")
    done = subprocess.run([NODE, "--input-type=module", "-e", script, "--", json.dumps(VALUES)], cwd=NODE_WORKER,
                          capture_output=True, text=True, timeout=30, check=True)
    expected = [[Fact(v, "retail segment").remember_prompt, Fact(v, "retail segment").question_prompt] for v in VALUES]
    assert json.loads(done.stdout) == expected


def _event(kind, id_, parent=None, timestamp=None, **data):
    found = {"id": id_, "parentId": parent, "type": kind, "data": data}
    return found | ({"timestamp": timestamp} if timestamp else {})


LOGS = {
    "closed-then-resumed": [
        _event("session.start", "0", copilotVersion="1.0.102"),
        _event("user.message", "1", "0", "2026-12-05T05:00:00.000Z", content="Remember"),
        _event("assistant.message", "2", "1", "2026-12-05T05:00:00.250Z", content="OK"),
        _event("session.shutdown", "3", "2"),
        _event("session.resume", "4", "3", eventCount=4, alreadyInUse=False),
        _event("user.message", "5", "4", content="Which?"),
    ],
    "forked-and-torn": [
        _event("session.start", "0"), _event("user.message", "1", "0"), _event("user.message", "2", "0"),
        _event("session.resume", "3", "2", eventCount=True, alreadyInUse="no"),  # wrong types read as None
        _event("assistant.message", "4", "3", content=""),
    ],
    "empty": [],
}
LOGS["answered"] = LOGS["closed-then-resumed"][:3]  # last_reply_ms from the log's timestamps


@pytest.mark.parametrize("name", sorted(LOGS))
def test_the_eventlog_summary_is_the_python_workers(name):
    text = "".join(json.dumps(e) + "\n" for e in LOGS[name])
    if name == "forked-and-torn":
        text += '{"id": "5", "type": "assistant.mess'  # a torn last line
    script = ("import { report } from './eventlog.mjs';"
              "let text = ''; process.stdin.on('data', d => text += d);"
              "process.stdin.on('end', () => console.log(JSON.stringify(report('s', text, 1))));")
    assert decode(node_eval(script, text)) == msgspec.structs.replace(report("s", text.encode()), t=1)


def test_a_missing_log_is_reported_as_not_found():
    script = "import { report } from './eventlog.mjs'; console.log(JSON.stringify(report('s', null, 1)));"
    assert decode(node_eval(script)) == msgspec.structs.replace(report("s", None), t=1)


@pytest.mark.skipif(not (NODE_WORKER / "node_modules" / ".installed").is_file(),
                    reason="the Node.js worker's SDK is not installed: run `make setup`")
def test_a_spec_it_cannot_read_is_one_error_event_and_exit_0():
    done = subprocess.run([NODE, "worker.mjs"], cwd=NODE_WORKER, input="this is not a spec\n",
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    event = decode(lines[0])
    assert isinstance(event, ActionFailed) and event.action == "read-spec"
    assert event.message.startswith("cannot read the worker spec from stdin")


def test_the_node_worker_in_a_container_ends_when_the_run_lets_go_of_its_lifeline(tmp_path):
    """As the Python worker does (tests/unit/test_containers.py): the worker connects to the
    run's lifeline before it reads its spec, and exits when the run's end closes it, here
    while it waits for a runtime that never answers (a stand-in that only sleeps)."""
    import asyncio
    import os
    import signal

    from handoff.containers.lifeline import Lifeline
    from handoff.worker import lifeline as worker_lifeline

    silent = tmp_path / "silent-runtime"
    silent.write_text("#!/bin/sh\necho started > \"$0.started\"\nexec sleep 60\n")
    silent.chmod(0o755)
    spec = {"scenario": "s", "step": "A", "host": "local", "runtime_path": str(silent), "home": str(tmp_path / "home"),
            "witness_url": "http://127.0.0.1:9", "fact_value": "v", "fact_topic": "t", "actions": ["create"]}

    async def scenario() -> tuple[int | None, int]:
        line = Lifeline()
        address = await line.start("127.0.0.1")
        worker = await asyncio.create_subprocess_exec(
            NODE, str(NODE_WORKER / "worker.mjs"), env={"HANDOFF_LIFELINE": address, "PATH": os.environ["PATH"]},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)
        try:
            worker.stdin.write((json.dumps(spec) + "\n").encode())
            await worker.stdin.drain()
            started = tmp_path / "silent-runtime.started"
            for _ in range(300):  # until the worker has started its runtime and waits on it
                if started.exists():
                    break
                await asyncio.sleep(0.05)
            still = worker.returncode
            line.close()
            return still, await asyncio.wait_for(worker.wait(), 10), (await worker.stderr.read()).decode()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)  # the stand-in runtime, whatever became of the worker

    still_running, code, stderr = asyncio.run(scenario())
    assert still_running is None and code == worker_lifeline.LOST
    assert "the run that started this worker has ended; exiting" in stderr
