"""Where a worker runs. A host starts ``python -m handoff.worker`` somewhere and hands
back the process whose stdin takes the WorkerSpec and whose stdout carries its events.

Four kinds: ``local`` (a process here, local.py), ``namespace`` (a simulated machine made
of Linux namespaces, namespace.py), ``ssh`` (a worker started over OpenSSH, on a
namespace host running a real sshd, or on a real machine given with ``--host
NAME=ssh://...``, ssh.py) and ``container`` (each step in a container of its own, on a
real container engine, container.py).
"""

from __future__ import annotations

import asyncio
import os
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from handoff.processes import ProcessTracker

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# Credentials a worker gets only when its backend needs them (the Copilot token with
# --backend copilot); kept out of every other worker's environment.
SCRUBBED_ENV = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_HOME")
WORKER_MODULE = "handoff.worker"
BROWSER_WORKER_MODULE = "handoff.chat.worker"  # a step done in `handoff chat`'s page
PIPES = dict(stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)


# What a runtime writes outside its COPILOT_HOME (its unpacked files with an in-use marker
# per running runtime, a telemetry device id, a user cache) goes under HOME or these.
XDG_DIRS = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
# Every host's user directory, kept between runs as a machine's would be: the runtime
# unpacks itself there once, not on every start (~1 s).
USER_DIRS = PROJECT_ROOT / ".state" / "hosts"


def worker_env(passed: tuple[str, ...] = (), user_dir: str | None = None) -> dict[str, str]:
    """This process's environment for a worker, without the credentials it is not given.
    With ``user_dir``, that is the worker's HOME and the XDG directories default under it,
    so nothing the runtime writes lands in the real user's home; so does Node's compile
    cache, which would otherwise go to the machine's TMPDIR and grow there by ~2.4 MB for
    every checkout path and runtime version (221 MB in /tmp on the machine that found it)."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV or k in passed}
    if user_dir is not None:
        env = {k: v for k, v in env.items() if k not in XDG_DIRS}
        env["HOME"] = user_dir
        env["NODE_COMPILE_CACHE"] = compile_cache(user_dir)
    return env


def compile_cache(user_dir: str) -> str:
    """Where a runtime started with this user directory keeps Node's compiled code."""
    return f"{user_dir}/.cache/node-compile-cache"


@dataclass(frozen=True)
class Launch:
    """How a step wants its worker started, beyond the store it is given. A container host
    has more than one way: a new container whose home is an anonymous volume of its own,
    or the host's previous container started again (a restart). A step running other
    versions than the default needs the interpreter of another SDK's virtual environment
    (None: the tool's own), or the Node.js worker's script for the Node.js SDK, and the
    cache its runtime unpacks itself into (None: the host's own); only ``local`` runs other
    versions, every kind of host the Node.js worker."""

    anonymous_home: bool = False
    restart: bool = False
    python: Path | None = None
    runtime_cache: Path | None = None
    node_worker: Path | None = None
    # The worker's module: a step done in a browser runs the chat's (handoff/chat/worker.py).
    module: str = WORKER_MODULE

    @property
    def forkable(self) -> bool:
        """Whether the zygote's fork runs this worker: it has the default Python SDK imported."""
        return self.python is None and self.node_worker is None and self.module == WORKER_MODULE

    def command(self) -> tuple[str, ...]:
        """``python -m handoff.worker`` with the interpreter of the SDK the step asks for, or
        ``node sdks/node/worker.mjs`` for the Node.js SDK."""
        if self.node_worker is not None:
            return ("node", str(self.node_worker))
        return (str(self.python or sys.executable), "-m", self.module)

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with what these versions need: the runtime's own unpack cache, and for
        another SDK's interpreter the project on its path (it is not installed there)."""
        env = dict(env)
        if self.runtime_cache is not None:
            env["XDG_CACHE_HOME"] = str(self.runtime_cache)
        if self.python is not None:
            env["PYTHONPATH"] = str(PROJECT_ROOT)
        return env


class Host(ABC):
    """A place a worker runs. What it can do is said by its properties, which the
    coordinator asks instead of looking at its class."""

    kind: str
    passed_env: tuple[str, ...] = ()  # scrubbed variables this run's workers do need
    carries_environment = True  # False: the worker does not get this process's environment
    sees_run_files = False  # True: the worker can open files under the run's directory (a registry file)
    on_simulated_lan = False  # True: it reaches the run's services at the LAN gateway, not on loopback
    reaches_internet = True  # False: a simulated host has no route out
    has_own_runtime = False  # True: it runs the runtime installed on its own machine, not ours
    netns: str | None = None  # its network namespace, for a simulated host (a partition cuts it there)
    lan_gateway: str | None = None  # where it reaches the run's services, on the simulated LAN

    def __init__(self, name: str):
        self.name = name

    @abstractmethod
    async def start_worker(self, tracker: ProcessTracker, store: Path, stderr, cwd: Path,
                           launch: Launch = Launch()) -> asyncio.subprocess.Process:
        """Start a worker whose sessions live in ``store`` (a directory on this machine,
        or, on a container host, what stands for a volume). Only ``local`` takes another
        runtime or Python SDK in ``launch`` (the scenario loader refuses them on other hosts);
        every kind takes the Node.js worker."""

    @abstractmethod
    def home(self, store: Path) -> str:
        """The path the worker on this host uses as its COPILOT_HOME for ``store``."""

    def devices(self, workdir: Path) -> str:
        """Where a step's browsers keep their profiles on this host, as seen there: "" for
        in the step's home. A machine's browsers outlive the homes its steps are given
        (a step with a home of its own, say); a simulated host's see only its home."""
        return ""

    def witness_url(self, url: str) -> str:
        """The witness's address as seen from this host."""
        return url

    async def close(self) -> None:
        """Release what the host holds (its processes are the tracker's to kill)."""
