"""Where a worker runs. A host starts ``python -m handoff.worker`` somewhere and hands
back the process whose stdin takes the WorkerSpec and whose stdout carries its events.

Three kinds: ``local`` (a subprocess here), ``namespace`` (a simulated machine made of
Linux namespaces) and ``ssh`` (a worker started over OpenSSH, on a namespace host running
a real sshd, or on a real machine given with ``--host NAME=ssh://...``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from abc import ABC, abstractmethod
from pathlib import Path

from handoff.processes import ProcessTracker
from handoff.worker.zygote import Zygote

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# Credentials a worker gets only when its backend needs them (the Copilot token with
# --backend copilot); kept out of every other worker's environment.
SCRUBBED_ENV = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_HOME")
PIPES = dict(stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)


def worker_env(passed: tuple[str, ...] = ()) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV or k in passed}


class Host(ABC):
    kind: str
    passed_env: tuple[str, ...] = ()  # scrubbed variables this run's workers do need

    def __init__(self, name: str):
        self.name = name

    @abstractmethod
    async def start_worker(self, tracker: ProcessTracker, store: Path, stderr, cwd: Path) -> asyncio.subprocess.Process:
        """Start a worker whose sessions live in ``store`` (a directory on this machine)."""

    @abstractmethod
    def home(self, store: Path) -> str:
        """The path the worker on this host uses as its COPILOT_HOME for ``store``."""

    def witness_url(self, url: str) -> str:
        """The witness's address as seen from this host."""
        return url

    async def close(self) -> None:
        """Release what the host holds (its processes are the tracker's to kill)."""


class LocalHost(Host):
    """This machine. With a zygote, workers are forked from it, SDK already imported."""

    kind = "local"

    def __init__(self, name: str, zygote: Zygote | None = None):
        super().__init__(name)
        self.zygote = zygote

    async def start_worker(self, tracker, store, stderr, cwd):
        if self.zygote is not None:
            return await self.zygote.fork(worker_env(self.passed_env), cwd, stderr)
        return await tracker.spawn(
            sys.executable, "-m", "handoff.worker", stderr=stderr, cwd=cwd, env=worker_env(self.passed_env), **PIPES
        )

    def home(self, store: Path) -> str:
        return str(store)
