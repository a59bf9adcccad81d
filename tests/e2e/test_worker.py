"""A worker never raises to its parent: whatever goes wrong arrives as JSON lines."""

from __future__ import annotations

import subprocess
import sys

from handoff.protocol import ActionFailed, Finished, WorkerSpec, decode


def _run_worker(stdin: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "handoff.worker"], input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    return [decode(line) for line in done.stdout.splitlines()]


def test_unreadable_spec_is_reported_not_raised():
    events = _run_worker("this is not json")
    assert [type(e) for e in events] == [ActionFailed]
    assert events[0].action == "read-spec"


def test_runtime_that_cannot_start_is_reported_and_finished(tmp_path):
    spec = WorkerSpec(
        scenario="s", step="A", host="local", runtime_path=str(tmp_path / "no-runtime"), home=str(tmp_path),
        witness_url="http://127.0.0.1:9", fact_value="v", fact_topic="t", actions=("create",),
        session_id="handoff-test-worker",
    )
    events = _run_worker(spec.to_json().decode())
    assert [type(e) for e in events] == [ActionFailed, Finished]
    assert events[-1].ok is False
