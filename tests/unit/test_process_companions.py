"""A tracked process can bring a companion outside its tree down with it: how a `podman
run` client takes its container's first process (the engine monitor's child) along."""

from __future__ import annotations

import asyncio
import subprocess

import psutil

from handoff.processes import ProcessTracker


def test_killing_a_tracked_process_kills_its_companion_and_the_companions_children():
    async def scenario() -> tuple[int, list[int]]:
        tracker = ProcessTracker()
        client = await tracker.spawn("sleep", "60")
        # started elsewhere, in a session of its own, with a child: as a container's process 1
        companion = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], start_new_session=True)
        for _ in range(100):
            if psutil.Process(companion.pid).children():
                break
            await asyncio.sleep(0.01)
        below = [child.pid for child in psutil.Process(companion.pid).children()]
        tracker.attach(client.pid, lambda: companion.pid)
        tracker.kill_tree(client.pid)
        await client.wait()
        tracker.forget(client.pid)
        return companion.pid, below

    companion, below = asyncio.run(scenario())
    # (the tracker waited for it and reaped it, a child of this test process)
    assert below and not any(_running(pid) for pid in [companion, *below])


def test_a_companion_that_is_not_running_is_skipped():
    async def scenario() -> int:
        tracker = ProcessTracker()
        client = await tracker.spawn("sleep", "60")
        tracker.attach(client.pid, lambda: None)
        tracker.kill_tree(client.pid)
        code = await client.wait()
        tracker.forget(client.pid)
        return code

    assert asyncio.run(scenario()) == -9


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_stop_all_kills_a_process_born_after_the_tracker_that_nobody_registered_and_spares_an_older_one():
    """As a spawn cut short by an interrupt: its process was started, never registered.
    Born a moment after the tracker, as the run's first processes are; psutil's start
    times run up to a second off the wall clock, so no time comparison decides this."""
    older = subprocess.Popen(["sleep", "60"])
    try:
        tracker = ProcessTracker()
        unregistered = subprocess.Popen(["sleep", "60"])
        tracker.stop_all()  # kills, waits, and reaps its orphans: this child's status included
        assert not psutil.pid_exists(unregistered.pid)
        assert older.poll() is None
    finally:
        older.kill()
        older.wait()
