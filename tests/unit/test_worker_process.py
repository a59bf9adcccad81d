"""The worker-process primitive (handoff/worker_process.py), with fake workers
(tests/unit/fakes.py): every line kept and decoded once as it comes, the deadline, the
kill and the reap however the block ends; and a step driven through it is handed to its
record already decoded, so judging the run decodes no line again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from handoff.checker.checks import judge_scenario
from handoff.protocol import RELEASE, Finished, Holding, Stdout, WorkerSpec, decode_all, encode
from handoff.runs import record as record_module
from handoff.runs.record import StepRecord
from handoff.worker_process import WorkerProcess

from tests.unit.fakes import HANG, WAIT_RELEASE, FakeWorker, FakeTracker, finished, ready
from tests.unit.test_coordinator import FACT, A, B, a_worker, b_worker, by_step, run, scenario

SPEC = WorkerSpec(scenario="s", step="A", host="local", runtime_path="", home="/h", witness_url="http://w",
                  fact_value="V", fact_topic="t", actions=("create",)).to_json()


def started(tracker: FakeTracker, tmp_path: Path, script):
    async def start(stderr):
        worker = FakeWorker(script)
        tracker.workers[worker.pid] = worker
        return worker
    return WorkerProcess.started(tracker, tmp_path / "stderr", start)


def test_every_line_is_kept_and_decoded_once_as_it_comes(tmp_path):
    heard = []

    async def go():
        tracker = FakeTracker()
        async with started(tracker, tmp_path, lambda spec: [ready(spec), "not an event", "", finished()]) as worker:
            await worker.feed(SPEC)

            async def hear(event):
                heard.append(event)
            await worker.run(5.0, hear)
        return worker, tracker

    worker, tracker = asyncio.run(go())
    assert [type(e).__name__ for e in heard] == ["Ready", "Finished"]
    assert worker.said.events == heard and worker.said.lines[1:3] == ["not an event", ""]
    assert (worker.said.events, worker.said.problems) == decode_all(worker.said.lines)  # as a stored run reads them
    assert worker.exit_code == 0 and not worker.timed_out and tracker.killed == [worker.pid]  # reaped, tree killed


def test_past_its_deadline_it_is_timed_out_killed_and_reaped(tmp_path):
    async def go():
        tracker = FakeTracker()
        async with started(tracker, tmp_path, lambda spec: [ready(spec), HANG]) as worker:
            await worker.feed(SPEC)
            await worker.run(0.2)
        return worker

    worker = asyncio.run(go())
    assert worker.timed_out and worker.exit_code < 0 and len(worker.said.events) == 1


def test_a_block_that_raises_still_kills_and_reaps_it_and_a_dead_worker_is_told_nothing(tmp_path):
    tracker = FakeTracker()
    workers = []

    async def go():
        async with started(tracker, tmp_path, lambda spec: [ready(spec), WAIT_RELEASE, finished()]) as worker:
            workers.append(worker)
            await worker.feed(SPEC)
            raise RuntimeError("the caller failed")

    with pytest.raises(RuntimeError):
        asyncio.run(go())
    [worker] = workers
    assert worker.exit_code < 0 and tracker.killed == [worker.pid]
    asyncio.run(worker.tell(RELEASE))  # gone: nothing written, nothing raised
    assert worker.process.releases == 0


def test_a_record_given_a_drivers_stdout_does_not_decode_it_again(monkeypatch):
    decoded = []
    monkeypatch.setattr(record_module, "decode_all", lambda lines: decoded.append(lines) or decode_all(lines))
    said = Stdout()
    for event in (Holding(t=1.0, session_id="id-1", point="after-turn", turn=1), Finished(t=2.0, ok=True)):
        said.add(encode(event).decode().rstrip("\n"))
    step = StepRecord("A", "local", "shared", "home", "id-1")
    step.heard(said)
    assert step.lines is said.lines and step.view().events is said.events and decoded == []
    step.lines.append("a line added later")  # then the lines are read again, as before
    assert len(step.view().problems) == 1 and len(decoded) == 1


def test_a_driven_scenarios_steps_are_decoded_as_they_came_and_never_again(tmp_path, monkeypatch):
    decoded = []
    monkeypatch.setattr(record_module, "decode_all", lambda lines: decoded.append(lines) or decode_all(lines))
    record, _ = run(scenario(A, B), tmp_path, by_step(A=a_worker, B=b_worker))
    judge_scenario(record, FACT)
    assert all(step.view().finished for step in record.steps) and decoded == []
