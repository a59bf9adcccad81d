"""The owner mark and the ledger: what a run makes is written down before it is made, so
that what a killed run leaves behind is told, by proof and not by its name, from what a
live run is using and from what the tool never made (leftovers.py finds and removes it).

* A run's processes carry ``HANDOFF_OWNER=<pid>`` in their environment (every child
  inherits it). Its names carry the pid too (:func:`tag`), for a person reading them.
* Its **ledger** (``.state/owners/``, one file a process, only its user may read it)
  starts with the owner's identity — its pid, when it started (clock ticks since boot)
  and the boot — and lists every directory, network namespace, link, mount and engine
  name prefix it is about to make, written before the thing is made (a kill between the
  two leaves a line naming nothing, which is harmless; the other order would leave a
  thing no ledger names). A name already taken is struck off again (:func:`strike`).

A name alone proves nothing: a volume ``handoff-201912-backup`` or another user's
``/tmp/handoff-run-3ffff0-x`` looks like the tool's. Only what some ledger of this user
names is ever removed, and only once that ledger's owner is gone: no process with its pid
and start time in this boot.

Only names, the mark and the ledger's writing and reading here, no finding or removing,
so that every part that makes something (hosts, containers, stores, faults) can write it
down without depending on the cleanup, which knows them all.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from handoff.runtime_locator import PROJECT_ROOT

OWNER_VARIABLE = "HANDOFF_OWNER"  # in every process a run starts (every child inherits it)
OWNER_START_VARIABLE = "HANDOFF_OWNER_START"  # beside it: when the owner started, so a reused pid names no one else
RUN_DIR_PREFIX = "handoff-run-"  # a run's directory in TMPDIR
MOUNT_PREFIX = "handoff-disk-"  # the source name of a small file system a disk-full fault mounts
POSTGRES_DIR = PROJECT_ROOT / ".state" / "postgres"  # where throwaway PostgreSQL servers keep their data
POSTGRES_PREFIX = "pg-"  # a throwaway server's directory in POSTGRES_DIR
TAG_DIGITS = 6  # a pid in hex; Linux pids stay below 2**22 (0x400000)
LEDGERS = PROJECT_ROOT / ".state" / "owners"
LEDGER_SUFFIX = ".ledger"
LEDGER_MAX_BYTES = 4 << 20  # a run writes a few hundred lines; a larger file is not one of ours
PID_LIMIT = 1 << 22  # the kernel's pid_max can be no higher (PID_MAX_LIMIT on 64-bit Linux)

# What a ledger lists: a directory, a network namespace, a link, a mount point, and an
# engine name prefix (every container, volume and network of a run starts with it and "-").
DIRECTORY, NAMESPACE, LINK, MOUNT, ENGINE_PREFIX = "directory", "namespace", "link", "mount", "engine prefix"
KINDS = (DIRECTORY, NAMESPACE, LINK, MOUNT, ENGINE_PREFIX)


def tag(pid: int | None = None) -> str:
    """The owner mark that goes into a name: the pid, in fixed-width hex (link names
    have room for 15 characters only)."""
    return f"{os.getpid() if pid is None else pid:0{TAG_DIGITS}x}"


def claim() -> None:
    """Make this process the owner of everything it starts from now on: its processes
    carry the mark (its pid and when it started), and its ledger is there before them."""
    with _lock:
        _my_ledger()
    me = started(os.getpid())
    os.environ[OWNER_VARIABLE] = str(os.getpid())
    os.environ[OWNER_START_VARIABLE] = str(me.ticks if me else "")


def marks() -> dict[str, str]:
    """The owner mark as a process started by hand (a container's) is to carry it."""
    return {name: os.environ[name] for name in (OWNER_VARIABLE, OWNER_START_VARIABLE) if name in os.environ} or \
        {OWNER_VARIABLE: str(os.getpid())}


def marked_start(value: str | None) -> int | None:
    """The owner's start tick a process's mark gives; None when it gives none."""
    return int(value) if value is not None and value.isascii() and value.isdigit() and len(value) < 20 else None


def marked_owner(value: str | None) -> int | None:
    """The owner a process's mark names; None for a mark that names no possible pid."""
    if value is None or not value.isascii() or not value.isdigit() or len(value) > 7:
        return None
    pid = int(value)
    return pid if 0 < pid < PID_LIMIT else None


# --- who a process is: its pid, when it started, in which boot ------------------------


@dataclass(frozen=True)
class Start:
    pid: int
    ticks: int  # when it started, in clock ticks since boot (/proc/<pid>/stat's starttime)
    boot: str  # the kernel's boot id: ticks from another boot mean nothing


def _boot() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def started(pid: int) -> Start | None:
    """When the process ``pid`` started; None when there is no such process or it has
    ended (a zombie has)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    fields = text[text.rfind(")") + 2:].split()  # the command name may hold spaces and ")"
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return Start(pid, int(fields[19]), _boot())


def running(owner: Start) -> bool:
    """Whether the owner is still alive: the same pid, started at the same tick, in this boot."""
    return started(owner.pid) == owner


# --- writing this process's ledger -------------------------------------------------------

_lock = threading.Lock()
_mine: tuple[int, Path] | None = None  # (pid, ledger): a forked child writes a ledger of its own


def _my_ledger() -> Path:
    global _mine
    if _mine is not None and _mine[0] == os.getpid():
        return _mine[1]
    me = started(os.getpid())
    if me is None:
        raise OSError("this process's start time cannot be read from /proc")
    LEDGERS.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not _ours(LEDGERS):
        raise OSError(f"{LEDGERS} is another user's or others may write in it: remove it, or make it yours (mode 700)")
    path = LEDGERS / f"{me.pid}-{me.ticks}-{secrets.token_hex(4)}{LEDGER_SUFFIX}"
    header = {"pid": me.pid, "ticks": me.ticks, "boot": me.boot}
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as ledger:
        ledger.write(json.dumps(header) + "\n")
    _mine = (me.pid, path)
    return path


def _write(line: dict[str, object]) -> None:
    with _lock:
        path = _my_ledger()
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        try:
            os.write(descriptor, (json.dumps(line) + "\n").encode())  # one write: whole lines only
        finally:
            os.close(descriptor)


def note(kind: str, name: str) -> None:
    """Write down that this process is about to make ``name`` (of one of :data:`KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"not a kind a ledger lists: {kind}")
    _write({"kind": kind, "name": name})


def strike(kind: str, name: str) -> None:
    """Strike ``name`` off again: it was noted but not made (someone else's was there)."""
    _write({"kind": kind, "name": name, "made": False})


def make_directory(prefix: str, parent: Path | None = None) -> Path:
    """A new directory only this user may enter, as ``tempfile.mkdtemp`` makes one, noted
    in the ledger before it exists."""
    parent = Path(tempfile.gettempdir()) if parent is None else parent
    for _ in range(100):
        path = parent.absolute() / f"{prefix}{secrets.token_hex(5)}"
        note(DIRECTORY, str(path))
        try:
            path.mkdir(mode=0o700)
            return path
        except FileExistsError:
            strike(DIRECTORY, str(path))
    raise FileExistsError(f"no free name for a directory {prefix}… in {parent}")


# --- reading every ledger ----------------------------------------------------------------


@dataclass(frozen=True)
class Ledger:
    path: Path
    owner: Start
    things: tuple[tuple[str, str], ...]  # (kind, name), in the order they were noted

    def named(self, kind: str) -> list[str]:
        return [name for each, name in self.things if each == kind]


def ledgers() -> list[Ledger]:
    """Every ledger of this user; a file that is not one (another user's, a link, too
    large, a first line that names no owner) is passed over, never trusted."""
    found = []
    if not _ours(LEDGERS):  # another user could have removed or put anything there
        return []
    with contextlib.suppress(OSError):
        for path in sorted(LEDGERS.iterdir()):
            ledger = _read(path)
            if ledger is not None:
                found.append(ledger)
    return found


def _ours(folder: Path) -> bool:
    """A directory of this user's that no one else may write in."""
    try:
        status = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(status.st_mode) and status.st_uid == os.geteuid() and not status.st_mode & 0o022


def _read(path: Path) -> Ledger | None:
    if not path.name.endswith(LEDGER_SUFFIX):
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid() or status.st_size > LEDGER_MAX_BYTES:
            return None
        lines = file.read(LEDGER_MAX_BYTES).decode("utf-8", errors="replace").splitlines()
    owner = _owner(lines[0]) if lines else None
    if owner is None:
        return None
    things: dict[tuple[str, str], None] = {}
    for line in lines[1:]:
        entry = _entry(line)
        if entry is None:
            continue  # a line a kill cut short
        kind, name, made = entry
        if made:
            things[(kind, name)] = None
        else:
            things.pop((kind, name), None)
    return Ledger(path, owner, tuple(things))


def _json(line: str) -> dict | None:
    if len(line) > 8192:
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _owner(line: str) -> Start | None:
    header = _json(line)
    if header is None:
        return None
    pid, ticks, boot = header.get("pid"), header.get("ticks"), header.get("boot")
    if type(pid) is not int or type(ticks) is not int or not isinstance(boot, str):
        return None
    if not 0 < pid < PID_LIMIT or not 0 <= ticks < 1 << 63:
        return None
    return Start(pid, ticks, boot)


def _entry(line: str) -> tuple[str, str, bool] | None:
    entry = _json(line)
    if entry is None:
        return None
    kind, name, made = entry.get("kind"), entry.get("name"), entry.get("made", True)
    if kind not in KINDS or not isinstance(name, str) or not name or not isinstance(made, bool):
        return None
    if "\0" in name:  # no name the tool makes holds one, and the system calls refuse it
        return None
    return kind, name, made


def forget(ledger: Ledger) -> None:
    """Remove a gone owner's ledger, once nothing it names is left."""
    ledger.path.unlink(missing_ok=True)
