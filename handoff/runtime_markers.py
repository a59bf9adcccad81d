"""The in-use markers a Copilot runtime leaves behind when it is killed.

A running runtime (1.0.102) holds ``inuse.<pid>.hold`` open, beside an ``inuse.<pid>.lock``,
in the directory it unpacked itself into, and removes both when it exits. SIGKILL gives
it no chance and nothing removes them later, so every crash scenario would leave two
files behind per run. Whoever kills processes (handoff/processes.py) notes the markers
they hold before the kill and removes them afterwards.

Only files named for the killed process's own pid are touched, its pid as the runtime
itself sees it (inside a simulated host's PID namespace that is not our number for it).
The directory is opened through ``/proc/<pid>/root`` before the kill and kept open, so
the files are found even in a host's mount namespace that is gone by the time they are
removed. If a later runtime names its markers otherwise, nothing is found or removed.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass(frozen=True)
class Marker:
    directory: int  # an open descriptor of the directory holding it
    name: str  # inuse.<pid>.hold


def held_by(processes: list[psutil.Process]) -> list[Marker]:
    """The in-use markers held open by ``processes``. The caller must pass the result to
    :func:`remove`, which also closes the directories."""
    markers = []
    for process in processes:
        with contextlib.suppress(psutil.Error, OSError):
            own = f"inuse.{_own_pid(process.pid)}.hold"
            for path in _open_paths(process.pid):
                if path.name == own:
                    seen_from_here = f"/proc/{process.pid}/root{path.parent}"
                    markers.append(Marker(os.open(seen_from_here, os.O_RDONLY | os.O_DIRECTORY), own))
    return markers


def remove(markers: list[Marker]) -> None:
    """Remove the markers and their ``.lock`` companions (whichever still exist)."""
    for marker in markers:
        try:
            for name in (marker.name, marker.name.removesuffix(".hold") + ".lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=marker.directory)
        finally:
            os.close(marker.directory)


def _open_paths(pid: int) -> list[Path]:
    """What the process has open, as paths in its own mount namespace (psutil's
    open_files() leaves out paths that do not exist in ours)."""
    paths = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            paths.append(Path(os.readlink(f"/proc/{pid}/fd/{fd}")))
    return paths


def _own_pid(pid: int) -> str:
    """The pid a process has in its own PID namespace (the last one of ``NSpid``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(line.split()[-1] for line in status.splitlines() if line.startswith("NSpid:"))
