"""The container engine: which one, how it is called, and whether it can be used here.

Podman is the default: it needs no daemon, and Debian packages it. Docker is used when
asked for (``--engine docker``) and only when its daemon answers (``DOCKER_HOST`` or the
default socket); otherwise the container scenarios are skipped with the reason. Both take
the same commands for everything the tool does (run, start, rm, volume, network, import,
build); the few differences are kept here.

Podman is given a configuration file of the tool's own (``CONTAINERS_CONF``, written
under ``.state/containers/``), because two of its defaults fail on machines like this
one: it asks runc for ``nofile``/``nproc`` limits above this process's hard limits
(runc: "error setting rlimits ... operation not permitted"), so the defaults become the
limits this process has (``nproc`` no higher than the kernel's pid_max: runc could set
no more than that here, 32768, although the hard limit was 96362); and where runc is installed it is chosen, since crun refuses
hybrid cgroup hierarchies. With that variable set podman reads no other containers.conf.

Everything the tool makes in an engine is named ``handoff-<owner>...`` (owners.py: the owner mark),
so that what a killed run left is found and removed by `handoff clean`.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from handoff.processes import ProcessTracker
from handoff.runtime_locator import PROJECT_ROOT

ENGINES = ("podman", "docker")
STATE = PROJECT_ROOT / ".state" / "containers"
CONFIG = STATE / "containers.conf"
NAME_PREFIX = "handoff-"
# What the tool makes in an engine, in removal order (a pod takes its containers with it).
KINDS = ("pod", "container", "volume", "network")
PODMAN_ONLY = ("pod",)  # docker has no pods
COMMAND_TIMEOUT = 60.0
PID_MAX_FALLBACK = 32768


class EngineError(RuntimeError):
    """An engine command failed; the message carries the command and what it said."""


def _pid_max() -> int:
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        return PID_MAX_FALLBACK


def _podman_config() -> str:
    lines = ["# Written by copilot-handoff (handoff/containers/engine.py); rewritten when it differs.", "[containers]"]
    limits = []
    for name, number in (("nofile", resource.RLIMIT_NOFILE), ("nproc", resource.RLIMIT_NPROC)):
        hard = resource.getrlimit(number)[1]
        if name == "nproc":
            hard = min(hard if hard != resource.RLIM_INFINITY else PID_MAX_FALLBACK, _pid_max())
        if hard != resource.RLIM_INFINITY:
            limits.append(f'"{name}={hard}:{hard}"')
    lines.append(f"default_ulimits = [{', '.join(limits)}]")
    lines.append("[engine]")
    if shutil.which("runc"):
        lines.append('runtime = "runc"')
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Engine:
    name: str = "podman"

    @property
    def installed(self) -> bool:
        return shutil.which(self.name) is not None

    @property
    def joins_namespaces(self) -> bool:
        """Whether its containers can join a network namespace made outside it, by path
        (podman's ``--network ns:``); docker's join only its own networks and containers."""
        return self.name == "podman"

    def command(self, *args: str) -> list[str]:
        return [self.name, *args]

    def env(self) -> dict[str, str]:
        """The environment engine commands run with (podman's configuration file written
        first, when it is missing or out of date)."""
        env = dict(os.environ)
        if self.name == "podman":
            wanted = _podman_config()
            if not CONFIG.is_file() or CONFIG.read_text() != wanted:
                CONFIG.parent.mkdir(parents=True, exist_ok=True)
                partial = CONFIG.with_suffix(".partial")
                partial.write_text(wanted)
                partial.replace(CONFIG)
            env["CONTAINERS_CONF"] = str(CONFIG)
        return env

    def install_hint(self) -> str:
        if self.name == "podman":
            return "install podman and runc (as root: `apt-get install podman runc`; `make setup` does it)"
        return "start a Docker daemon (or set DOCKER_HOST to one), or use --engine podman"

    def problem(self) -> str | None:
        """Why this engine cannot run containers here, in one line with the fix; None when
        it can. Asks the engine itself (podman: its storage and runtime; docker: the daemon)."""
        if not self.installed:
            return f"`{self.name}` is not installed: {self.install_hint()}"
        probe = ("info", "--format", "{{.Host.OCIRuntime.Name}}") if self.name == "podman" else \
            ("version", "--format", "{{.Server.Version}}")
        try:
            done = self.run_sync(*probe, timeout=30)
        except EngineError as error:
            said = str(error).split(": ", 1)[-1]
            if self.name == "docker":
                where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
                return f"no Docker daemon answers at {where} ({said}): {self.install_hint()}"
            return f"podman does not work here ({said}): run `handoff doctor`"
        return None if done.strip() else f"{self.name} answered nothing to `{' '.join(probe)}`"

    def version(self) -> str | None:
        try:
            return self.run_sync("version", "--format", "{{.Client.Version}}", timeout=30).strip() or None
        except EngineError:
            return None

    def run_sync(self, *args: str, timeout: float = COMMAND_TIMEOUT) -> str:
        """A short engine command; its standard output, or EngineError with what it said."""
        try:
            done = subprocess.run(self.command(*args), capture_output=True, text=True, timeout=timeout, env=self.env())
        except (OSError, subprocess.TimeoutExpired) as error:
            raise EngineError(f"`{self.name} {' '.join(args)}` failed: {error}") from None
        if done.returncode != 0:
            said = " ".join((done.stderr or done.stdout).split())[-400:]
            raise EngineError(f"`{self.name} {' '.join(args)}` failed: {said}")
        return done.stdout

    async def run(self, tracker: ProcessTracker, *args: str, timeout: float = COMMAND_TIMEOUT) -> str:
        """The same from the event loop, the command tracked like every child of a run."""
        process = await tracker.spawn(*self.command(*args), env=self.env(), stdin=asyncio.subprocess.DEVNULL,
                                      stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except asyncio.TimeoutError:
            tracker.kill_tree(process.pid)
            await process.wait()
            raise EngineError(f"`{self.name} {' '.join(args)}` did not finish within {timeout:.0f} s") from None
        finally:
            tracker.forget(process.pid)
        if process.returncode != 0:
            said = " ".join(err.decode(errors="replace").split())[-400:]
            raise EngineError(f"`{self.name} {' '.join(args)}` failed: {said}")
        return out.decode(errors="replace")

    # --- what the tool made in the engine, for cleanup -------------------------------------

    def names(self, kind: str, strict: bool = False) -> list[str]:
        """The names of the tool's containers, volumes or networks in this engine (every
        owner's); [] when the engine cannot be asked (``strict``: EngineError then)."""
        if kind in PODMAN_ONLY and self.name != "podman":
            return []
        listing = {"pod": ("pod", "ps", "--format", "{{.Name}}"),
                   "container": ("ps", "--all", "--format", "{{.Names}}"),
                   "volume": ("volume", "ls", "--format", "{{.Name}}"),
                   "network": ("network", "ls", "--format", "{{.Name}}")}[kind]
        try:
            out = self.run_sync(*listing, timeout=30)
        except EngineError:
            if strict:
                raise
            return []
        return [name for name in out.split() if name.startswith(NAME_PREFIX)]

    def remove_sync(self, kind: str, names: list[str]) -> None:
        """Remove them, a container with its anonymous volumes; what is already gone is not an error."""
        if not names:
            return
        # podman's rm would first try the stop signal and wait (a worker, process 1 of its
        # container, ignores SIGTERM); --time 0 kills at once, as docker's rm --force does
        now = ("--time", "0") if self.name == "podman" else ()
        command = {"pod": ("pod", "rm", "--force", *now),
                   "container": ("rm", "--force", "--volumes", *now), "volume": ("volume", "rm", "--force"),
                   "network": ("network", "rm", "--force")}[kind]
        try:
            self.run_sync(*command, *names)
        except EngineError:
            if not all(self._gone(kind, name) for name in names):
                raise

    def _gone(self, kind: str, name: str) -> bool:
        return name not in self.names(kind)


def engines_in_use() -> list[Engine]:
    """The engines whose leftovers are looked for: podman when installed, Docker when its
    daemon is configured (DOCKER_HOST) or its default socket exists."""
    found = [Engine("podman")] if shutil.which("podman") else []
    if shutil.which("docker") and (os.environ.get("DOCKER_HOST") or os.path.exists("/var/run/docker.sock")):
        found.append(Engine("docker"))
    return found
