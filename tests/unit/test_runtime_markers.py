"""A killed runtime's in-use markers are removed by whoever killed it, also when it
opened them after the killer looked (a runtime killed while it starts), and only its
own: another runtime's markers beside them stay. The "runtime" here is a small real
process that makes its markers where a runtime does ($HOME/.cache/copilot/pkg/<platform>/
<version>) at the moment the test tells it to."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from handoff import leftovers, owners, runtime_markers
from tests.owners_gone import Owner

# Waits for a line on stdin, then makes and holds its markers, says so, and sleeps.
FAKE_RUNTIME = """
import os, sys, time
sys.stdin.readline()
package = os.path.join(os.environ["HOME"], ".cache", "copilot", "pkg", "linux-x64", "9.9.9")
os.makedirs(package, exist_ok=True)
open(os.path.join(package, f"inuse.{os.getpid()}.lock"), "w").close()
held = open(os.path.join(package, f"inuse.{os.getpid()}.hold"), "w")
print("holding", flush=True)
time.sleep(600)
"""


def _start(home, **environment) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", FAKE_RUNTIME], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "HOME": str(home), **environment})


def _hold(runtime: subprocess.Popen) -> None:
    runtime.stdin.write("go\n")
    runtime.stdin.flush()
    assert runtime.stdout.readline() == "holding\n"


def _package(home):
    return home / ".cache" / "copilot" / "pkg" / "linux-x64" / "9.9.9"


def _other_runtime_markers(home) -> list[str]:
    """Markers of another (live) runtime, named for a pid that is not the killed one's."""
    _package(home).mkdir(parents=True, exist_ok=True)
    names = ["inuse.1.hold", "inuse.1.lock"]
    for name in names:
        (_package(home) / name).write_text("")
    return names


@pytest.mark.parametrize("held_when_noted", [True, False], ids=["held-when-noted", "opened-after-the-note"])
def test_a_killed_runtimes_markers_are_removed_and_no_other(tmp_path, held_when_noted):
    """Also the race a kill during a runtime's start used to lose: nothing was held open
    when the killer looked, and the markers appeared before the kill landed."""
    runtime = _start(tmp_path)
    try:
        others = _other_runtime_markers(tmp_path)
        if held_when_noted:
            _hold(runtime)
        markers = runtime_markers.of([psutil.Process(runtime.pid)])
        if not held_when_noted:
            _hold(runtime)
        runtime.kill()
        runtime.wait()
        runtime_markers.remove(markers)
        assert sorted(p.name for p in _package(tmp_path).iterdir()) == others
    finally:
        runtime.kill()
        runtime.wait()


def test_xdg_cache_home_is_where_a_runtime_unpacks_when_it_is_set(tmp_path):
    cache = tmp_path / "cache"
    runtime = subprocess.Popen(
        [sys.executable, "-c", FAKE_RUNTIME.replace('os.environ["HOME"], ".cache"', 'os.environ["XDG_CACHE_HOME"]')],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(cache)})
    try:
        markers = runtime_markers.of([psutil.Process(runtime.pid)])
        _hold(runtime)
        runtime.kill()
        runtime.wait()
        runtime_markers.remove(markers)
        assert list((cache / "copilot" / "pkg" / "linux-x64" / "9.9.9").iterdir()) == []
    finally:
        runtime.kill()
        runtime.wait()


def test_a_gone_owners_runtime_killed_as_a_leftover_loses_its_markers(tmp_path):
    """The next run kills what a SIGKILLed run left running; a runtime among those held
    its markers open until then, so they were not leftovers yet when they were looked for."""
    gone = Owner()
    runtime = _start(tmp_path, **{owners.OWNER_VARIABLE: str(gone.pid)})
    try:
        _hold(runtime)
        gone.end()
        mine = [left for left in leftovers.find() if left.kind == "process" and left.owner == gone.pid]
        assert [left.name.split()[0] for left in mine] == [str(runtime.pid)]
        assert leftovers.remove(mine) == []
        assert not psutil.pid_exists(runtime.pid)  # killed and reaped (its exit status went with the reaping)
        assert list(_package(tmp_path).iterdir()) == []
    finally:
        runtime.kill()
        runtime.wait()
        gone.end()
