"""The in-use markers a Copilot runtime leaves behind when it is killed.

A running runtime (1.0.102) holds ``inuse.<pid>.hold`` open, beside an ``inuse.<pid>.lock``,
in the directory it unpacked itself into (``$XDG_CACHE_HOME/copilot/pkg/<platform>/<version>``,
by default under ``$HOME/.cache``) and in an open session's directory, and removes both
when it exits. SIGKILL gives it no chance and nothing removes them later, so every crash
scenario would leave two files behind per run. Whoever kills processes (handoff/processes.py,
the faults, leftovers.py, the lab) notes where their markers are before the kill and
removes them afterwards.

Noted are the directories of the markers a process holds open, and its unpack directory
whether or not it holds one yet: a runtime killed while it starts may open its marker
after the note was taken and before the kill landed, so what is removed is whatever
carries its name once it is dead, not what was seen open before.

Only files named for the killed process's own pid are touched, its pid as the runtime
itself sees it (inside a simulated host's PID namespace that is not our number for it).
Directories are opened through ``/proc/<pid>/root`` before the kill and kept open, so
the files are found even in a host's mount namespace that is gone by the time they are
removed. If a later runtime names its markers otherwise, nothing is found or removed.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

import psutil

UNPACKED_UNDER = "copilot/pkg"  # below the cache directory: <platform>/<version>/


@dataclass(frozen=True)
class Marker:
    opened: int  # an open descriptor of the directory, or of its nearest ancestor that existed
    below: str  # the rest of the way from there ("" when the directory itself was opened)
    own_pid: str  # the pid in their names
    unpack_root: bool = False  # the directory is copilot/pkg: markers are two levels below it

    @property
    def names(self) -> tuple[str, str]:
        return f"inuse.{self.own_pid}.hold", f"inuse.{self.own_pid}.lock"


def of(processes: list[psutil.Process]) -> list[Marker]:
    """Where the in-use markers of ``processes`` are or may appear. The caller must pass
    the result to :func:`remove` once they are dead, which also closes what it opened."""
    markers = []
    for process in processes:
        with contextlib.suppress(psutil.Error, OSError, StopIteration):
            own = _own_pid(process.pid)
            places = [(path.parent, False) for path in _open_paths(process.pid) if path.name == f"inuse.{own}.hold"]
            with contextlib.suppress(psutil.Error, KeyError):  # no HOME: nowhere it could unpack
                places.append((Path(_cache_directory(process)) / UNPACKED_UNDER, True))
            for directory, unpack_root in places:
                opened, below = _open_nearest(f"/proc/{process.pid}/root", directory)
                markers.append(Marker(opened, below, own, unpack_root))
    return markers


def remove(markers: list[Marker]) -> None:
    """Remove the markers (whichever exist) and close what :func:`of` opened."""
    for marker in markers:
        try:
            with contextlib.suppress(OSError):
                directory = os.open(marker.below or ".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=marker.opened)
                try:
                    for found in _version_directories(directory) if marker.unpack_root else [directory]:
                        try:
                            _unlink(marker.names, found)
                        finally:
                            if found != directory:
                                os.close(found)
                finally:
                    os.close(directory)
        finally:
            os.close(marker.opened)


def _open_nearest(root: str, directory: Path) -> tuple[int, str]:
    """Open ``directory`` as the process sees it, or its nearest ancestor that exists (a
    runtime's first start creates its unpack directory). Opened now, before the kill, it
    stays reachable: a simulated host's mounts are gone once its last process is, and
    with them the way to the directory from its root."""
    parts = directory.relative_to("/").parts
    for kept in range(len(parts), -1, -1):
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            opened = os.open(os.path.join(root, *parts[:kept]), os.O_RDONLY | os.O_DIRECTORY)
            return opened, os.path.join(*parts[kept:]) if kept < len(parts) else ""
    raise FileNotFoundError(root)


def _version_directories(unpack_root: int) -> list[int]:
    """Open descriptors of copilot/pkg/<platform>/<version>; the caller closes them."""
    found = []
    for platform in _subdirectories(unpack_root):
        with contextlib.suppress(OSError):
            platform_directory = os.open(platform, os.O_RDONLY | os.O_DIRECTORY, dir_fd=unpack_root)
            try:
                for version in _subdirectories(platform_directory):
                    with contextlib.suppress(OSError):
                        found.append(os.open(version, os.O_RDONLY | os.O_DIRECTORY, dir_fd=platform_directory))
            finally:
                os.close(platform_directory)
    return found


def _unlink(names: tuple[str, str], directory: int) -> None:
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=directory)


def _subdirectories(directory: int) -> list[str]:
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        return [entry.name for entry in entries if entry.is_dir(follow_symlinks=False)]
    return []


def _cache_directory(process: psutil.Process) -> str:
    """The runtime's cache directory as it sees it: $XDG_CACHE_HOME, else $HOME/.cache
    (its environment as it was started, which is what the runtime reads)."""
    environment = process.environ()
    return environment.get("XDG_CACHE_HOME") or f"{environment['HOME']}/.cache"


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
