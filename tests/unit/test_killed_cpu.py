"""What a killed worker and its runtime had used is noted at the kill (handoff/processes.py),
since a killed worker reports nothing: real processes, a stand-in runtime named as the
Copilot runtime is (its argv[0])."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from handoff.processes import cpu_used

BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"


def _burning(seconds: float, argv0: str | None = None) -> subprocess.Popen:
    """A process that uses ``seconds`` of CPU, then sleeps; named ``argv0`` if given."""
    code = BURN.format(seconds=seconds) + "time.sleep(60)\n"
    if argv0:
        return subprocess.Popen(["bash", "-c", f'exec -a {argv0} "$0" -c "$1"', sys.executable, code])
    return subprocess.Popen([sys.executable, "-c", code])


def _settled(*processes: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        used = [sum(psutil.Process(p.pid).cpu_times()[:2]) for p in processes]
        if min(used) >= seconds:
            return
        time.sleep(0.05)
    raise AssertionError("the processes did not use their CPU in time")


def test_the_runtime_s_share_and_the_rest_are_told_apart():
    worker, runtime = _burning(0.2), _burning(0.4, argv0="copilot")
    try:
        _settled(worker, seconds=0.2)
        _settled(runtime, seconds=0.4)
        used = cpu_used([psutil.Process(worker.pid), psutil.Process(runtime.pid)])
        assert used is not None
        assert 0.4 <= used.runtime < 1.0 and 0.2 <= used.worker < 0.6
    finally:
        for process in (worker, runtime):
            process.kill()
            process.wait()


def test_nothing_is_noted_when_no_victim_was_alive():
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    zombie = psutil.Process(ended.pid)
    deadline = time.monotonic() + 10
    while zombie.status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert cpu_used([zombie]) is None  # it ended by itself: whoever reaps it counts it
        assert cpu_used([]) is None
    finally:
        ended.wait()
