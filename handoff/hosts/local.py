"""This machine as a host: workers forked from the zygote, or spawned as new interpreters.

A step with another SDK version is always spawned, from that SDK's virtual environment:
the zygote has the default SDK imported, so a worker forked from it would run the
default SDK whatever the step asked for. The project is not installed in those
environments; PYTHONPATH points the interpreter at it (it needs only the worker's own
dependencies, which the environment pins: msgspec, psutil, psycopg).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from handoff.errors import UserError
from handoff.hosts.base import PIPES, USER_DIRS, Host, Launch, compile_cache, worker_env
from handoff.hosts.zygote import Zygote
from handoff.processes import can_die_with_parent
from handoff.runtime_locator import locate_runtime
from handoff.words import HostKind


LOCAL_USER_DIR = USER_DIRS / HostKind.LOCAL
VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?")
RUNTIME_VERSION_TIMEOUT = 30.0  # seconds; a first start unpacks the runtime (about 235 MB) before it answers


def runtime_environment(cache: Path | None = None) -> dict[str, str]:
    """What a runtime started on this machine outside a run gets (the doctor's and the
    bench's `--version`): a local worker's environment, so it unpacks itself where the
    runs will find it, and nothing lands in your home or TMPDIR. ``cache``: the unpack
    cache of a runtime of another version."""
    return Launch(runtime_cache=cache).environment(worker_env(user_dir=str(LOCAL_USER_DIR)))


def app_runtime_environment() -> dict[str, str]:
    """What a runtime an app of the tool starts gets (the lab's, the chat's): this
    process's environment, as an app's would, but Node's compile cache kept with this
    machine's other runtimes of the tool (unless you chose a place): its default is
    TMPDIR, where it grows with every checkout path and runtime version and nothing
    removes it."""
    return {**os.environ, "NODE_COMPILE_CACHE": os.environ.get("NODE_COMPILE_CACHE")
            or compile_cache(str(LOCAL_USER_DIR))}


def ready_runtime() -> Path:
    """The runtime a run or the lab starts, checked as far as it can be before anything
    starts: there is one (runtime_locator), util-linux's setpriv is there to tie each
    process the tool starts to the tool's life (processes.py), and a runtime named by
    COPILOT_CLI_PATH answers `--version` (anything else that is executable would fail
    every session later, as exit 3 or 4)."""
    runtime = locate_runtime()
    if not can_die_with_parent():
        raise UserError("setpriv is not on the PATH: every process the tool starts is tied to it through setpriv "
                        "(util-linux); install util-linux, or put its directory on the PATH")
    if os.environ.get("COPILOT_CLI_PATH") and runtime_version(runtime) is None:
        raise UserError(f"COPILOT_CLI_PATH={runtime}: does not answer `--version` as a Copilot runtime does; "
                        f"point it at a runtime's executable, or unset it")
    return runtime


def runtime_version(runtime: Path, cache: Path | None = None) -> str | None:
    """The version ``runtime --version`` prints, run as a local worker's runtime is
    (without --no-auto-update a runtime hands off to the newest version unpacked in its
    cache and prints that one's, not its own); None when it does not run or says none.
    ``cache``: the unpack cache of a runtime of another version."""
    try:
        done = subprocess.run([str(runtime), "--no-auto-update", "--version"], capture_output=True, text=True,
                              timeout=RUNTIME_VERSION_TIMEOUT, env=runtime_environment(cache))
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = VERSION.search(done.stdout + done.stderr)
    return found.group(0) if done.returncode == 0 and found else None


class LocalHost(Host):
    """This machine. With a zygote, workers are forked from it, SDK already imported.
    Its workers run with a user directory of their own (``.state/hosts/local``), as each
    simulated host's do: the runtimes a crash scenario kills leave their in-use markers
    there, not in the real user's ~/.cache."""

    kind = HostKind.LOCAL
    sees_run_files = True

    def __init__(self, name: str, zygote: Zygote | None = None):
        super().__init__(name)
        self.zygote = zygote
        self.user_dir = LOCAL_USER_DIR
        self.user_dir.mkdir(parents=True, exist_ok=True)

    async def start_worker(self, tracker, store, stderr, cwd, launch: Launch = Launch()):
        env = launch.environment(worker_env(self.passed_env, str(self.user_dir)))
        if self.zygote is not None and launch.forkable:
            return await self.zygote.fork(env, cwd, stderr)
        return await tracker.spawn(*launch.command(), stderr=stderr, cwd=cwd, env=env, **PIPES)

    def home(self, store: Path) -> str:
        return str(store)

    def devices(self, workdir: Path) -> str:
        return str(workdir / "devices")  # the scenario's own directory: every step of it sees the same browsers
