"""Workers started over OpenSSH.

The worker's spec goes over the SSH channel on stdin and its events come back on stdout,
exactly as with a local worker. The witness model is reached through a reverse port
forward (``ssh -R``): the remote side's ``127.0.0.1:PORT`` leads to the coordinator's
witness, so a remote machine needs no route back to the coordinator.

Two ways to get an SSH host:
* ``--host b=ssh://user@machine[:port]/path/to/home?project=~/copilot-handoff`` — a real
  machine with this project set up (``make setup``) in ``project``. ``path/to/home`` is
  the COPILOT_HOME the worker uses there (an NFS mount, for a shared store).
* a scenario host of kind ``ssh`` with no ``--host`` — Debian's ``sshd`` started inside a
  namespace host, with a throwaway key pair made for the run, so the SSH path is tested
  for real on one machine.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs

from handoff.errors import UserError
from handoff.hosts.base import PIPES, PROJECT_ROOT, Host, Launch
from handoff.hosts.namespace import COMPILE_CACHE, HOME_INSIDE, INSIDE, USER_INSIDE, NamespaceHost
from handoff.inputs import network_url
from handoff.processes import ProcessTracker
from handoff.words import HostKind

SSHD = "/usr/sbin/sshd"
SSHD_START_TIMEOUT = 10.0
USER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9._-]{0,31}")  # what useradd takes; never an ssh option
HOME_PREFIX = re.compile(r"~(?:[A-Za-z_][A-Za-z0-9._-]{0,31})?")  # ~ or ~user, which the remote shell expands


@dataclass(frozen=True)
class SshTarget:
    user: str
    address: str
    port: int
    home: str
    project: str

    @classmethod
    def parse(cls, name: str, url: str) -> SshTarget:
        example = "ssh://user@machine[:port][/home/path][?project=DIR]"
        parts = network_url(url, f"--host {name}=", ("ssh",), example)
        given = f"--host {name}"
        user = parts.username or "root"
        if not USER_NAME.fullmatch(user):
            raise UserError(f"{given}: the user {user!r} is not a user name (letters, digits, . _ -, not first -)")
        if parts.hostname.startswith("-"):
            raise UserError(f"{given}: the machine {parts.hostname!r} begins with '-', which ssh reads as an option")
        query = parse_qs(parts.query, keep_blank_values=True)
        unknown = sorted(set(query) - {"project"})
        if unknown or len(query.get("project", [])) > 1:
            raise UserError(f"{given}: only one ?project=DIR is understood (got {', '.join(unknown) or 'two'}); "
                            f"expected e.g. {example}")
        project = query.get("project", ["~/copilot-handoff"])[0]
        if not project.strip():
            raise UserError(f"{given}: ?project= is empty; give the directory the project is set up in there, "
                            f"or leave it out for ~/copilot-handoff")
        return cls(user, parts.hostname, parts.port or 22, parts.path or "~/.copilot-handoff/home", project)

    def project_word(self) -> str:
        """The project's directory as one word of the remote shell, whatever it holds; a
        leading ``~`` or ``~user`` still means that home there (the shell expands it only
        unquoted)."""
        home, slash, rest = self.project.partition("/")
        if HOME_PREFIX.fullmatch(home):
            return home + slash + (shlex.quote(rest) if rest else "")
        return shlex.quote(self.project)

    def describe(self) -> str:
        return f"ssh://{self.user}@{self.address}:{self.port}{self.home}?project={self.project}"


class SshHost(Host):
    """A real machine given with --host NAME=ssh://...: it has its own runtime and its
    own route out; the witness is reached through a reverse port forward."""

    kind = HostKind.SSH
    carries_environment = False  # sshd passes no environment on: secrets go in the spec
    has_own_runtime = True

    def __init__(self, name: str, target: SshTarget, witness_host: str, witness_port: int,
                 ssh_options: list[str] | None = None):
        super().__init__(name)
        self.target = target
        self.witness_host = witness_host  # where the coordinator's witness listens, seen from here
        self.witness_port = witness_port
        self.ssh_options = ssh_options or []

    def _ssh(self, command: str) -> list[str]:
        return [
            "ssh", "-T", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes", "-o", "ConnectTimeout=10",
            *self.ssh_options,
            "-R", f"127.0.0.1:{self.witness_port}:{self.witness_host}:{self.witness_port}",
            "-p", str(self.target.port), f"{self.target.user}@{self.target.address}", command,
        ]

    worker_environment = ""  # assignments put before the worker's command on the far side

    async def start_worker(self, tracker: ProcessTracker, store: Path, stderr, cwd: Path, launch: Launch = Launch()):
        return await tracker.spawn(*self._ssh(self.worker_command(launch)), stderr=stderr, cwd=cwd, **PIPES)

    def worker_command(self, launch: Launch = Launch()) -> str:
        """The remote shell's command: the project's Python worker there, or, for a step with
        ``sdk = "node@..."``, its Node.js worker, which that machine must have set up (node
        on the PATH, ``make setup`` run); where it has not, the command says so on stderr,
        which the step's record keeps, and runs nothing."""
        project = self.target.project_word()
        if launch.node_worker is None:
            return f"cd {project} && {self.worker_environment}exec .venv/bin/python -m handoff.worker"
        worker = launch.node_worker.relative_to(PROJECT_ROOT)  # the same place in the project there
        installed = worker.parent / "node_modules" / ".installed"
        where = f"{self.target.user}@{self.target.address}:{self.target.project}"
        no_node = shlex.quote(f"{where}: no node on the PATH for the Node.js worker: install Node.js 20+ there")
        not_set_up = shlex.quote(f"{where}: the Node.js worker is not installed there: run make setup there")
        return (f"cd {project} && "
                f"{{ command -v node >/dev/null || {{ echo {no_node} >&2; exit 127; }}; }} && "
                f"{{ test -f {shlex.quote(str(installed))} || {{ echo {not_set_up} >&2; exit 127; }}; }} && "
                f"{self.worker_environment}exec node {shlex.quote(str(worker))}")

    def home(self, store: Path) -> str:
        return self.target.home

    def witness_url(self, url: str) -> str:
        return f"http://127.0.0.1:{self.witness_port}"  # the forwarded port on the remote side


class NamespaceSshHost(SshHost):
    """An sshd on a namespace host: a second machine reached only through SSH."""

    on_simulated_lan = True
    reaches_internet = False
    has_own_runtime = False  # it shares this machine's installed software, as namespace hosts do

    # sshd passes no environment on, and its login's HOME is this machine's real /root,
    # which the host's view shows: the worker gets the host's own user directory as a
    # namespace host's does, or its runtime unpacked itself and kept its in-use markers in
    # the real ~/.cache.
    worker_environment = f"HOME={USER_INSIDE} NODE_COMPILE_CACHE={COMPILE_CACHE} "

    def __init__(self, name: str, machine: NamespaceHost, keys: Path, witness_host: str, witness_port: int):
        self.machine = machine
        self.netns, self.lan_gateway = machine.netns, machine.lan_gateway
        self.keys = keys
        self.store: Path | None = None
        self.sshd: tuple[ProcessTracker, asyncio.subprocess.Process] | None = None
        target = SshTarget("root", machine.address, 22, HOME_INSIDE, str(PROJECT_ROOT))
        super().__init__(name, target, witness_host, witness_port, [
            "-i", str(keys / "client_key"), "-o", "IdentitiesOnly=yes",
            "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={keys / 'known_hosts'}",
        ])

    async def start_worker(self, tracker, store, stderr, cwd, launch=Launch()):
        if self.store is None:
            await self._start_sshd(tracker, store)
        elif store != self.store:
            raise UserError(f"ssh host '{self.name}' serves one store per scenario; give its steps the same home")
        return await super().start_worker(tracker, store, stderr, cwd, launch)

    async def close(self) -> None:
        if self.sshd is not None:
            tracker, process = self.sshd
            tracker.kill_tree(process.pid)
            await process.wait()
            tracker.forget(process.pid)
        await self.machine.close()

    async def _start_sshd(self, tracker: ProcessTracker, store: Path) -> None:
        self.keys.mkdir(parents=True)
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"handoff-{key}", "-f", str(self.keys / key)], check=True)
        shutil.copy(self.keys / "client_key.pub", self.keys / "authorized_keys")
        host_key = (self.keys / "host_key.pub").read_text().split()
        (self.keys / "known_hosts").write_text(f"{self.target.address} {host_key[0]} {host_key[1]}\n")
        (self.keys / "sshd_config").write_text("\n".join([
            f"ListenAddress {self.target.address}",
            f"HostKey {INSIDE}/ssh/host_key",
            f"AuthorizedKeysFile {INSIDE}/ssh/authorized_keys",
            "PidFile none", "UsePAM no", "StrictModes no", "PrintMotd no",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password", "AllowTcpForwarding remote",
        ]) + "\n")
        argv, env = self.machine.enter({"home": store, "ssh": self.keys}, SSHD, "-D", "-e", "-f", f"{INSIDE}/ssh/sshd_config")
        with (self.keys / "sshd.log").open("wb") as log:
            self.sshd = (tracker, await tracker.spawn(*argv, env=env, stdout=log, stderr=log))
        self.store = store
        await _wait_for_port(self.target.address, 22, SSHD_START_TIMEOUT, self.keys / "sshd.log")


async def _wait_for_port(address: str, port: int, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, port), timeout=0.5):
                return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"sshd on {address}:{port} did not start: {log.read_text(errors='replace').strip()[-300:]}")
