"""The in-use markers a Copilot runtime leaves behind when it is killed.

A running runtime (1.0.102) holds ``inuse.<pid>.hold`` open, beside an ``inuse.<pid>.lock``,
in the directory it unpacked itself into, and removes both when it exits. SIGKILL gives
it no chance and nothing removes them later, so every crash scenario would leave two
files behind per run. The coordinator notes the markers of a worker's runtimes before it
kills them on purpose and removes them afterwards. Only files named for the killed
process's own pid are touched; if a later runtime names them otherwise, nothing is found
and nothing is removed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import psutil


def held_by_runtimes_of(worker_pid: int) -> list[Path]:
    """The in-use markers held open by the processes under ``worker_pid``."""
    markers = []
    with contextlib.suppress(psutil.Error):
        for process in psutil.Process(worker_pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                own = f"inuse.{process.pid}.hold"
                markers += [Path(f.path) for f in process.open_files() if Path(f.path).name == own]
    return markers


def remove(markers: list[Path]) -> None:
    """Remove the markers and their ``.lock`` companions (whichever still exist)."""
    for hold in markers:
        for path in (hold, hold.with_suffix(".lock")):
            path.unlink(missing_ok=True)
