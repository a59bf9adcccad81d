"""A container monitor (conmon) of a killed run, and what runs under it, are leftovers:
the engine starts it without the run's owner mark, so only its container's name ties it
to the run. One whose container was being made when the run was killed outlived the
container's removal."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import psutil

from handoff import leftovers, owners
from tests.owners_gone import Owner


def until(condition, seconds: float = 10.0) -> None:
    """Wait for something the test started to be there (a bound for a failure, not a pace)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "it did not come"
        time.sleep(0.01)


def test_a_gone_run_s_container_monitor_and_its_child_are_found_and_killed():
    prefix = f"handoff-{secrets.token_hex(4)}"
    owner = Owner((owners.ENGINE_PREFIX, prefix))
    name = f"{prefix}-cross-container-volume-1234-b1"
    environment = {key: value for key, value in os.environ.items() if key != owners.OWNER_VARIABLE}
    # argv[0] "conmon", with conmon's -c and -n, and a child as runc's init would be (a fork:
    # under another argv[0] the interpreter finds only its built-in modules)
    code = "import os, time\nos.fork()\ntime.sleep(60)"
    monitor = subprocess.Popen(["bash", "-c", f'exec -a conmon {sys.executable} -c "$0" -c {"f" * 64} -n {name}',
                                code], env=environment)
    try:
        until(lambda: psutil.Process(monitor.pid).children())
        owner.end()
        child = psutil.Process(monitor.pid).children()[0]
        found = [left for left in leftovers.find() if left.owner == owner.pid]
        assert sorted(int(left.name.split()[0]) for left in found) == sorted([monitor.pid, child.pid])
        assert {left.kind for left in found} == {"process"}  # no cgroup: the engine made none for it
        assert leftovers.remove(found) == []
        monitor.wait(timeout=10)
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:
        monitor.kill()
        monitor.wait()
        owner.end()


def test_a_live_run_s_monitor_is_not_a_leftover():
    prefix = f"handoff-{owners.tag()}{secrets.token_hex(3)}"
    owners.note(owners.ENGINE_PREFIX, prefix)
    monitor = subprocess.Popen(["bash", "-c", f'exec -a conmon {sys.executable} -c "import time; time.sleep(60)" '
                                            f'-n {prefix}-x-1234-b1'])
    try:
        until(lambda: psutil.Process(monitor.pid).cmdline()[:1] == ["conmon"])
        assert all(left.owner != os.getpid() for left in leftovers.find())
        assert any(left.owner == os.getpid() for left in leftovers.find(of=os.getpid()))
    finally:
        monitor.kill()
        monitor.wait()


def test_a_monitor_whose_container_no_ledger_names_is_left_alone():
    """A process merely named conmon, watching a container named like the tool's."""
    owner = Owner()
    owner.end()
    monitor = subprocess.Popen(["bash", "-c", f'exec -a conmon {sys.executable} -c "import time; time.sleep(60)" '
                                            f'-n handoff-{owners.tag(owner.pid)}-web'])
    try:
        until(lambda: psutil.Process(monitor.pid).cmdline()[:1] == ["conmon"])
        assert all(not left.name.startswith(f"{monitor.pid} ") for left in leftovers.find())
        alone = [thing for thing in leftovers.left_alone() if thing.name.startswith(f"{monitor.pid} ")]
        assert [thing.why for thing in alone] == [leftovers.NOT_NOTED]
    finally:
        monitor.kill()
        monitor.wait()
