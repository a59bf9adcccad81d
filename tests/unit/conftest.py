"""For `make mutate` only (mutmut sets MUTANT_UNDER_TEST; nothing here runs otherwise).

mutmut runs the unit tests once in its own process (to learn which test reaches which
function), then forks a process per mutant and waits for *any* child, taking each for a
mutant. Some unit tests make their process a child subreaper (a ProcessTracker:
handoff/processes.py, also through bench/procs.py), so every orphan of a later test (a
SIGKILLed PostgreSQL server's processes, test_store_reconnect) becomes a child of mutmut's
process, and its wait then stops on a pid it never started (mutmut 3.8.1: KeyError). So
when a session ends in mutmut's own process, it stops being a subreaper and no child of it
is left: those still running are killed, and every one that ended is reaped.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

# mutmut's own process runs the tests as "stats", "" (the clean run) and "fail" (the forced
# failure); in a mutant's process the variable holds the mutant's name.
MUTMUT_OWN_PROCESS = ("stats", "", "fail", "list_all_tests")
_PR_SET_CHILD_SUBREAPER = 36


def _children() -> list[int]:
    mine = os.getpid()
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == mine:
                found.append(int(stat.parent.name))
    return found


def pytest_sessionfinish(session, exitstatus) -> None:
    if os.environ.get("MUTANT_UNDER_TEST") not in MUTMUT_OWN_PROCESS or sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    for pid in _children():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG if not _children() else 0)
        except ChildProcessError:
            return
        if pid == 0:
            return
