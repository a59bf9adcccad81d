"""Container hosts: each step's worker in an OCI container of its own, on a real engine.

A step placed on a container host runs ``python3.11 -m handoff.worker`` (or, for a step with
``sdk = "node@..."``, ``node sdks/node/worker.mjs``) in a new container
made from the worker image (handoff/containers/image.py), started by ``podman run`` (or
``docker run``) attached, so the spec goes in on its stdin and the events come back on its
stdout, as with every other host. The container has
* its own **hostname** (``ctr-<host>-<n>``, n counting the host's containers);
* its own **PID namespace**, the worker being its process 1;
* its own **file system**: the image's, plus what is mounted — the step's home at
  ``/mnt/home`` (a named volume, or an anonymous one), the host's user directory at
  ``/mnt/user`` (kept under ``.state/hosts/``, so the runtime unpacks itself once per
  host name), and, read-only at the paths they have here, the project's code, its venv's
  packages and the pinned runtime (the image holds only Debian and Python); a Node.js
  step is also given this machine's ``node`` executable and ``sdks/node`` (the worker and
  the TypeScript SDK that ``make setup`` installed there), the same way;
* its own **network**: with podman, the host is a machine on the run's simulated LAN
  (handoff/hosts/network.py), as a namespace host is: a network namespace with its own
  address, which its containers join (``--network ns:``), reaching the witness and
  PostgreSQL at the LAN's gateway. Docker cannot join a namespace it did not make, so
  there the run has an engine network instead (handoff/containers/network.py), routed to
  the same gateway. The LAN is also the cheaper of the two: an engine network's plugins
  and firewall rules cost each container start ~0.13 s of CPU and ~0.25 s of waiting
  (measured here with podman 4.3 and CNI), joining a namespace nothing.

Homes are engine volumes, not directories here: every step given the same home (``shared``)
mounts the same named volume, ``own`` a new one, ``anonymous`` an anonymous volume that
lives and dies with its container. A step with ``restart`` starts the host's previous
container again (``start --attach --interactive``): same container, same writable layer,
same anonymous volume, a new process tree.

The `podman run` process is the one the coordinator tracks; the container's process 1 is
the engine monitor's child, not ours, so the tracker is told how to find it (its pid file)
and kills it with the client: a time-out or a crash fault kills the container's whole PID
namespace in one signal, as when a container dies. A run that dies without cleaning up
still takes its containers with it: each worker holds the run's lifeline
(handoff/containers/lifeline.py). Containers and volumes are named for the run's owner
and removed when the scenario ends, or by `handoff clean` after a SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import psutil

from handoff import owners
from handoff.containers.engine import Engine, EngineError
from handoff.hosts.base import PIPES, PROJECT_ROOT, USER_DIRS, Host, Launch, compile_cache
from handoff.hosts.network import NETNS_DIR, Lan
from handoff.processes import ProcessTracker
from handoff.words import HostKind

HOME_INSIDE = "/mnt/home"
USER_INSIDE = "/mnt/user"
NAME_VARIABLE = "HANDOFF_CONTAINER"  # in the worker's environment: how its process is recognised here
PYTHON = "python3.11"


@dataclass(frozen=True)
class ContainerSetup:
    """What the container hosts of a run share, made once by the run's services."""

    engine: Engine
    image: str  # the worker image's tag
    network: str | None  # the run's engine network, where the engine cannot join the LAN (docker) or for pods
    lifeline: str  # address:port of the run's lifeline
    runtime: Path  # the runtime executable, mounted at its own path
    pid_dir: Path  # where the engine writes each container's process id
    lan: Lan | None = None  # podman: each container host is a machine on the run's simulated LAN


# What the node executable may link besides itself: the libraries every Debian image has
# (apt, in the image since debootstrap, needs libstdc++6 and libgcc-s1; libc6 is essential).
# A node built against shared libraries of its own (Debian's and Ubuntu's nodejs link
# libnode, libuv, OpenSSL, ICU) would not start inside the image: such a step is skipped.
IMAGE_LIBRARIES = re.compile(r"(linux-vdso|ld-linux[-\w]*|lib(c|m|dl|rt|pthread|stdc\+\+|gcc_s))\.so[.\d]*")


def node_executable() -> Path | None:
    """This machine's node, as the Node.js worker runs on it (its real file, not a link)."""
    found = shutil.which("node")
    return Path(found).resolve() if found else None


def node_problem() -> str | None:
    """Why this machine's node cannot run inside the worker image, or None. The image has
    no Node.js of its own (Debian 12's is 18, and the TypeScript SDK asks for 20.19+): a
    container is given this machine's node, which must then need no library the image lacks."""
    node = node_executable()
    if node is None:
        return "the Node.js worker needs node on the PATH: install Node.js 20+"
    try:
        linked = subprocess.run(["ldd", str(node)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"cannot tell which libraries {node} needs (ldd: {error})"
    foreign = [line.split()[0] for line in linked.splitlines()
               if line.strip() and not IMAGE_LIBRARIES.fullmatch(line.split()[0].rsplit("/", 1)[-1])]
    if foreign:
        return (f"{node} needs {', '.join(foreign)}, which the worker image does not have: a container is given this "
                f"machine's node, so install a self-contained Node.js 20+ build (nodejs.org's or NodeSource's)")
    return None


def software_mounts(runtime: Path, launch: Launch = Launch()) -> list[tuple[Path, Path]]:
    """What a container is given read-only from this machine: (here, there), same paths. A
    Node.js step also gets the node executable and the worker's directory (its SDK inside)."""
    packages = Path(sysconfig.get_paths()["purelib"])
    mounts = [(PROJECT_ROOT / "handoff", PROJECT_ROOT / "handoff"), (packages, packages),
              (runtime.parent, runtime.parent)]
    node = node_executable()
    if launch.node_worker is not None and node is not None:
        mounts += [(node, node), (launch.node_worker.parent, launch.node_worker.parent)]
    return mounts


def worker_command(launch: Launch) -> tuple[str, ...]:
    """What a new container runs: the image's Python with the mounted worker, or the
    mounted node with the Node.js worker."""
    if launch.node_worker is not None:
        return (str(node_executable() or "node"), str(launch.node_worker))
    return (PYTHON, "-m", "handoff.worker")


class ContainerHost(Host):
    kind = HostKind.CONTAINER
    carries_environment = False  # a container gets only the variables it is given: secrets go in the spec
    on_simulated_lan = True  # it reaches the run's services at the LAN gateway
    reaches_internet = False  # not tried: this machine has no route out to test it with

    def __init__(self, name: str, setup: ContainerSetup, prefix: str):
        super().__init__(name)
        self.setup = setup
        self.engine = setup.engine
        self.prefix = prefix  # handoff-<owner>...-<scenario>: every container and volume's name starts so
        self.user_dir = USER_DIRS / f"container-{name}"
        self.user_dir.mkdir(parents=True, exist_ok=True)
        self._containers: list[str] = []
        self._volumes: set[str] = set()
        self.namespace: str | None = None
        if setup.lan is not None:
            self.namespace, self.address = setup.lan.add_host(name)
            self.netns, self.lan_gateway = self.namespace, setup.lan.gateway

    async def start_worker(self, tracker: ProcessTracker, store: Path, stderr, cwd: Path, launch: Launch = Launch()):
        if launch.restart:
            if not self._containers:
                raise RuntimeError(f"host '{self.name}': restart, but no earlier step ran a container there")
            name = self._containers[-1]
            argv = self.engine.command("start", "--attach", "--interactive", name)
        else:
            name = f"{self.prefix}-{self.name}{len(self._containers) + 1}"
            argv = self.run_command(name, store, launch, *worker_command(launch))
            self._containers.append(name)
        self.setup.pid_dir.mkdir(parents=True, exist_ok=True)
        process = await tracker.spawn(*argv, env=self.engine.env(), stderr=stderr, **PIPES)
        tracker.attach(process.pid, lambda: self._first_process(name))
        return process

    def run_command(self, name: str, store: Path, launch: Launch, *command: str) -> list[str]:
        """The engine command that runs ``command`` in a new container of this host."""
        return self.engine.command("run", *self._run_options(name, store, launch), self.setup.image, *command)

    def _run_options(self, name: str, store: Path, launch: Launch) -> list[str]:
        if launch.anonymous_home:
            home = HOME_INSIDE
        else:
            volume = f"{self.prefix}-{store.name}"  # steps given the same home share its volume
            self._volumes.add(volume)
            home = f"{volume}:{HOME_INSIDE}"
        env = {
            "HOME": USER_INSIDE, "TMPDIR": "/tmp", "PYTHONPATH": f"{PROJECT_ROOT}:{sysconfig.get_paths()['purelib']}",
            "NODE_COMPILE_CACHE": compile_cache(USER_INSIDE),
            **owners.marks(), NAME_VARIABLE: name,
            "HANDOFF_LIFELINE": self.setup.lifeline,
            "HANDOFF_PYTHON": PYTHON,  # the Node.js worker's store bridge runs on the image's Python
        }
        options = ["--name", name, "--hostname", f"ctr-{self.name}-{len(self._containers) + 1}", "--interactive",
                   "--pull", "never", "--stop-timeout", "0", "--network", self._network(), "--workdir", USER_INSIDE,
                   "--volume", home, "--volume", f"{self.user_dir}:{USER_INSIDE}"]
        for here, there in software_mounts(self.setup.runtime, launch):
            options += ["--volume", f"{here}:{there}:ro"]
        for key, value in env.items():
            options += ["--env", f"{key}={value}"]
        if self.engine.name == "podman":
            options += ["--pidfile", str(self._pid_file(name))]
        return options

    def _network(self) -> str:
        return f"ns:{NETNS_DIR}/{self.namespace}" if self.namespace else str(self.setup.network)

    def _pid_file(self, name: str) -> Path:
        return self.setup.pid_dir / f"{name}.pid"

    def _first_process(self, name: str) -> int | None:
        """The container's process 1, as this machine numbers it, if it is running; only a
        process that carries the container's name counts (a pid may have been reused)."""
        pid = None
        with contextlib.suppress(OSError, ValueError):
            pid = int(self._pid_file(name).read_text().strip() or 0)
        if pid is None and self.engine.name != "podman":
            with contextlib.suppress(EngineError, ValueError):
                pid = int(self.engine.run_sync("inspect", "--format", "{{.State.Pid}}", name, timeout=10).strip())
        if not pid:
            return None
        with contextlib.suppress(psutil.Error):
            if psutil.Process(pid).environ().get(NAME_VARIABLE) == name:
                return pid
        return None

    def home(self, store: Path) -> str:
        return HOME_INSIDE

    async def close(self) -> None:
        """Remove the host's containers (with their anonymous volumes), then its volumes,
        then its place on the LAN."""
        containers, volumes = list(self._containers), sorted(self._volumes)
        self._containers.clear()
        self._volumes.clear()
        await asyncio.to_thread(self.engine.remove_sync, "container", containers)
        await asyncio.to_thread(self.engine.remove_sync, "volume", volumes)
        if self.namespace is not None and self.setup.lan is not None:
            await asyncio.to_thread(self.setup.lan.remove_host, self.namespace)
            self.namespace = None
