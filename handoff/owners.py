"""The owner mark: everything a run makes carries the pid of the `handoff` process that
made it, so that what a killed run leaves behind can be told from what a live one is
using (leftovers.py finds and removes it).

Only names and the environment variable here, no finding or removing, so that every
part that makes something (hosts, containers, stores, faults) can mark it without
depending on the cleanup, which knows them all.
"""

from __future__ import annotations

import os

from handoff.runtime_locator import PROJECT_ROOT

OWNER_VARIABLE = "HANDOFF_OWNER"  # in every process a run starts (every child inherits it)
RUN_DIR_PREFIX = "handoff-run-"  # a run's directory in TMPDIR
MOUNT_PREFIX = "handoff-disk-"  # the source name of a small file system a disk-full fault mounts
POSTGRES_DIR = PROJECT_ROOT / ".state" / "postgres"  # where throwaway PostgreSQL servers keep their data
POSTGRES_PREFIX = "pg-"  # a throwaway server's directory in POSTGRES_DIR
TAG_DIGITS = 6  # a pid in hex; Linux pids stay below 2**22 (0x400000)


def tag(pid: int | None = None) -> str:
    """The owner mark that goes into a name: the pid, in fixed-width hex (link names
    have room for 15 characters only)."""
    return f"{os.getpid() if pid is None else pid:0{TAG_DIGITS}x}"


def claim() -> None:
    """Make this process the owner of everything it starts from now on."""
    os.environ[OWNER_VARIABLE] = str(os.getpid())
