"""Workers forked from the zygote are processes of their own: own pid, own session and
process group, the stdio and directory they were given, and an exit status that comes
back to the coordinator, and the environment it was given rather than the zygote's.
Nothing of them or the zygote outlives the tracker."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import psutil

from handoff.hosts.zygote import Zygote
from handoff.processes import ProcessTracker
from handoff.protocol import WorkerSpec, decode


def _spec(tmp_path: Path) -> str:
    """A step whose runtime is "the one this machine has": found through COPILOT_CLI_PATH
    in the worker's environment, so the error shows which environment the worker got."""
    return WorkerSpec(scenario="s", step="A", host="local", runtime_path="", home=str(tmp_path),
                      witness_url="http://127.0.0.1:9", fact_value="v", fact_topic="t", actions=("create",),
                      session_id="handoff-test-zygote").to_json()


async def _settled(process: psutil.Process, cwd: Path) -> None:
    for _ in range(200):
        if process.cwd() == str(cwd):
            return
        await asyncio.sleep(0.01)


def test_a_forked_worker_is_its_own_process_and_reports_its_exit(tmp_path):
    async def scenario() -> dict:
        tracker = ProcessTracker()
        seen: dict = {}
        try:
            zygote = Zygote(tracker, tmp_path)
            await zygote.start()
            cwd = tmp_path / "cwd"
            cwd.mkdir()
            with (tmp_path / "worker.stderr").open("wb") as stderr:
                # One worker held on its stdin, inspected, then killed as a crash would be.
                held = await zygote.fork({"PATH": os.environ["PATH"], "HANDOFF_ZYGOTE_TEST": "given"}, cwd, stderr)
                process = psutil.Process(held.pid)
                await _settled(process, cwd)  # the fork returns at once; the child then sets itself up
                seen["pid_is_new"] = held.pid not in (os.getpid(), process.parent().pid)
                seen["parent_is_zygote"] = "handoff.hosts.zygote" in " ".join(process.parent().cmdline())
                seen["own_session_and_group"] = os.getsid(held.pid) == held.pid == os.getpgid(held.pid)
                seen["cwd"] = process.cwd()
                os.kill(held.pid, signal.SIGKILL)
                seen["killed_exit"] = await held.wait()

                # Another runs to the end: its events arrive on its stdout, its exit code after.
                given = {"PATH": os.environ["PATH"], "COPILOT_CLI_PATH": str(tmp_path / "runtime-from-the-given-env")}
                done = await zygote.fork(given, cwd, stderr)
                done.stdin.write(_spec(tmp_path))
                await done.stdin.drain()
                done.stdin.close()
                seen["events"] = [decode(line) async for line in done.stdout]
                seen["exit"] = await done.wait()
                seen["alive_before_stop"] = len(tracker.alive())
        finally:
            await tracker.shutdown()
            tracker.stop_all()
        seen["alive_after_stop"] = len(tracker.alive())
        return seen

    seen = asyncio.run(scenario())
    assert seen["pid_is_new"] and seen["parent_is_zygote"] and seen["own_session_and_group"]
    assert seen["cwd"] == str(tmp_path / "cwd")
    assert seen["killed_exit"] == -signal.SIGKILL
    assert [type(event).__name__ for event in seen["events"]] == ["ActionFailed", "Finished"]
    assert f"COPILOT_CLI_PATH={tmp_path}/runtime-from-the-given-env is not an executable" in seen["events"][0].message
    assert seen["exit"] == 0
    assert seen["alive_before_stop"] >= 1  # the zygote itself
    assert seen["alive_after_stop"] == 0


def test_cross_process_keeps_the_context_with_forked_and_with_spawned_workers():
    from handoff import scenario_files
    from handoff.fact import Fact
    from tests.e2e.conftest import run_scenarios

    chosen = scenario_files.select(["cross-process"])
    for fork_workers in (True, False):
        outcome = run_scenarios(chosen, Fact("Hibernating", "customer segment"), fork_workers=fork_workers)
        [asked] = outcome.asked("cross-process")
        assert (asked.verdict, asked.as_expected) == ("kept", True), (fork_workers, asked)
        pids = [step.ready.pid for step in outcome.steps("cross-process").values()]
        assert len(set(pids)) == 2  # A and B: two processes, each with its own runtime
