"""What a run leaves behind when it is killed, and how the next one finds and removes it.

A run cleans up after itself on success, failure, Ctrl-C and SIGTERM. SIGKILL gives it
no chance, so everything a run makes is written down in its **ledger** before it is made
(owners.py), under its owner: the `handoff` process that made it, known by its pid and
when it started:

* its processes carry ``HANDOFF_OWNER=<pid>`` in their environment (every child inherits
  it), and die with their parent besides (``setpriv --pdeathsig``, see processes.py);
* its network namespaces, bridge and veth links, its run directory in TMPDIR, its
  throwaway PostgreSQL's directory, a fault's small file system, and the name prefix of
  its containers, volumes and container network are in its ledger. A container also ends
  by itself when its run dies (its lifeline, containers/lifeline.py); only the stopped
  container, its volumes and its network are left for `handoff clean`.

What a ledger of this user names, once that ledger's owner is gone, is a leftover:
:func:`find` lists them and :func:`remove` removes them, for `handoff clean`, for
`handoff doctor` (which reports them), and at the start of every `handoff run`. A name
alone is never proof: what merely looks like the tool's (a volume ``handoff-201912-backup``,
another user's ``/tmp/handoff-run-…``, a process named conmon) is left alone, and
:func:`left_alone` says so and why. Nothing of a live owner is touched either, so runs
from other terminals are left alone.

Two kinds carry no owner's name and are told left over by nobody using them: a killed
runtime's in-use markers in the tool's own host directories and a killed PostgreSQL's
shared memory, of the tool's own service account.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import psutil

from handoff import owners, runtime_markers
from handoff.containers.engine import KINDS as ENGINE_KINDS
from handoff.containers.engine import NAME_PREFIX, Engine, EngineError, engines_in_use
from handoff.hosts.base import USER_DIRS
from handoff.owners import (
    DIRECTORY,
    ENGINE_PREFIX,
    LINK,
    MOUNT,
    MOUNT_PREFIX,
    NAMESPACE,
    OWNER_VARIABLE,
    POSTGRES_DIR,
    POSTGRES_PREFIX,
    RUN_DIR_PREFIX,
    Ledger,
)
from handoff.processes import kill_all
from handoff.stores.postgres_server import SERVICE_USER

UNMOUNT_SECONDS = 10.0  # for the killed processes still using a small disk to end
# What the tool's names look like: only to say what was left alone, never to decide
_LINK = re.compile(r"h(?:br|v|p)[0-9a-f]{6}")
NOT_NOTED = "no run of this tool, as this user, wrote it down as made: a name alone proves nothing"


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@dataclass(frozen=True)
class Leftover:
    kind: str  # "process", "cgroup", "container", "volume", "network", "namespace", "link", "mount", "directory",
    # "marker", "shared memory segment"
    name: str  # what to show: a pid and command, a container's name, a namespace, a path, a segment's id
    owner: int
    engine: str = ""  # for containers, volumes and networks: the engine that holds them
    since: float = 0.0  # for a process: when it started (psutil's create_time), so a pid used again is not killed

    @property
    def why(self) -> str:
        """Why it is a leftover, to say beside it."""
        # (a pid is used again: the run is gone although that pid may now be another process)
        return f"the run that made it (pid {self.owner} then) is gone" if self.owner else "no process uses it any more"


@dataclass(frozen=True)
class LeftAlone:
    """Something that looks like the tool's and is not removed, with the reason."""
    kind: str
    name: str
    why: str


def _accounts() -> set[int]:
    """The accounts a run's things belong to: this user, and the one its PostgreSQL runs as."""
    accounts = {os.geteuid()}
    with contextlib.suppress(KeyError):
        accounts.add(pwd.getpwnam(SERVICE_USER).pw_uid)
    return accounts


class _Machine:
    """What is on this machine now, each kind listed once, and only when asked for.
    ``complete`` turns False when a listing failed: then nothing may be taken for gone."""

    def __init__(self) -> None:
        self.complete = True

    def _ip(self, *args: str) -> str:
        out = _ip(*args)
        if out is None:
            self.complete = False
        return out or ""

    @cached_property
    def namespaces(self) -> set[str]:
        return {line.split()[0] for line in self._ip("netns", "list").splitlines() if line.split()}

    @cached_property
    def links(self) -> set[str]:
        found = set()
        for line in self._ip("-o", "link").splitlines():
            parts = line.split(":")
            if len(parts) > 1:
                found.add(parts[1].strip().split("@")[0])
        return found

    @cached_property
    def mounts(self) -> dict[str, str]:
        """Mount point -> source, as /proc/mounts writes them (a space in a path as \\040)."""
        found = {}
        try:
            lines = Path("/proc/mounts").read_text().splitlines()
        except OSError:
            self.complete, lines = False, []
        for line in lines:
            fields = line.split()
            if len(fields) >= 2:
                found[_unescaped(fields[1])] = _unescaped(fields[0])
        return found

    @cached_property
    def engine_objects(self) -> list[tuple[str, str, str]]:
        """(engine, kind, name) of everything named like the tool's, containers first (a
        volume or network in use by one cannot go before it)."""
        found = []
        for engine in engines_in_use():
            for kind in ENGINE_KINDS:
                try:
                    found += [(engine.name, kind, name) for name in engine.names(kind, strict=True)]
                except EngineError:
                    self.complete = False
        return found


def _unescaped(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda octal: chr(int(octal.group(1), 8)), field)


def _of_ledger(ledger: Ledger, machine: _Machine, accounts: set[int], running: list[Ledger],
               live: set[tuple[str, str]]) -> list[Leftover]:
    """What a ledger names that is still there (its processes aside), except what a
    running owner's ledger names too (``live``: its things): a name used again (a pid and
    a random part alike) is the live run's."""
    owner = ledger.owner.pid
    found = []
    if ledger.named(ENGINE_PREFIX):
        found += [Leftover(kind, name, owner, engine) for engine, kind, name in machine.engine_objects
                  if _named_by(name, [ledger]) and not _named_by(name, running)]
    found += [Leftover("namespace", name, owner) for name in ledger.named(NAMESPACE)
              if name in machine.namespaces and (NAMESPACE, name) not in live]
    found += [Leftover("link", name, owner) for name in ledger.named(LINK)
              if name in machine.links and (LINK, name) not in live]
    found += [Leftover("mount", point, owner) for point in ledger.named(MOUNT)
              if machine.mounts.get(point, "").startswith(MOUNT_PREFIX) and (MOUNT, point) not in live]
    found += [Leftover("directory", path, owner) for path in ledger.named(DIRECTORY)
              if _own_directory(path, accounts) and (DIRECTORY, path) not in live]
    return found


def _named_by(name: str, ledgers: list[Ledger]) -> bool:
    """Whether an engine object's name starts with a prefix one of the ledgers noted."""
    return any(name.startswith(f"{prefix}-") for ledger in ledgers for prefix in ledger.named(ENGINE_PREFIX))


def _own_directory(path: str, accounts: set[int]) -> bool:
    """A directory (not a link to one) of this user or of the run's PostgreSQL account."""
    try:
        status = os.lstat(path)
    except (OSError, ValueError):  # ValueError: a name no file can have
        return False
    return stat.S_ISDIR(status.st_mode) and status.st_uid in accounts


def _processes(chosen: list[Ledger], every: list[Ledger], accounts: set[int]) -> list[Leftover]:
    """The processes a run started (they carry its owner mark, and started after their
    owner did), and the container monitors (conmon) of its containers with what runs
    under them and the control groups they run in: the engine starts those without the
    run's environment, and one whose container was still being made when the run was
    killed outlives the container's removal (its cgroups are removed once it has been
    killed). Only processes of this user or the run's PostgreSQL account."""
    if not chosen:
        return []
    found: dict[str, Leftover] = {}
    for process in psutil.process_iter(["pid", "cmdline", "status", "uids"]):
        with contextlib.suppress(psutil.Error):
            if process.pid == os.getpid() or process.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if process.info["uids"] is None or process.info["uids"].real not in accounts:
                continue
            monitored = _monitored(process.info["cmdline"] or [])
            if monitored is None:
                ledger = _starter(process, every)
            else:
                ledger = next((each for each in chosen if _named_by(monitored[0], [each])), None)
            if ledger is None or ledger not in chosen:
                continue
            owner = ledger.owner.pid
            below = process.children(recursive=True) if monitored else []
            for each in (process, *below):
                name = f"{each.pid} {' '.join(each.cmdline() or [])[:80]}"
                found[name] = Leftover("process", name, owner, since=each.create_time())
            for group in _container_cgroups(monitored[1]) if monitored else []:
                found[group] = Leftover("cgroup", group, owner)
    return list(found.values())


def _starter(process: psutil.Process, every: list[Ledger]) -> Ledger | None:
    """The ledger of the run that started a marked process. Its mark names the owner's
    pid and when it started: the ledger of exactly that owner. A mark without the start
    (written by hand) is taken for the owner of that pid that last started before the
    process, and for none when that pid's process now alive started before it: the
    process is that live one's (a pid is used again, by runs of other checkouts too)."""
    environment = process.environ()
    pid = owners.marked_owner(environment.get(OWNER_VARIABLE))
    start = owners.started(process.pid) if pid is not None else None
    if start is None:
        return None
    ticks = owners.marked_start(environment.get(owners.OWNER_START_VARIABLE))
    if ticks is not None:
        return next((ledger for ledger in every if ledger.owner == owners.Start(pid, ticks, start.boot)), None)
    alive_now = owners.started(pid)
    if alive_now is not None and alive_now.ticks <= start.ticks:
        return None
    candidates = [ledger for ledger in every if ledger.owner.pid == pid and ledger.owner.boot == start.boot
                  and ledger.owner.ticks <= start.ticks]
    return max(candidates, key=lambda ledger: ledger.owner.ticks, default=None)


def _monitored(command: list[str]) -> tuple[str, str] | None:
    """For a conmon: the name of the container it watches (``-n``) and its id (``-c``);
    None for any other process."""
    if not command or Path(command[0]).name != "conmon" or "-n" not in command[:-1]:
        return None
    container = command[command.index("-c") + 1] if "-c" in command[:-1] else ""
    return command[command.index("-n") + 1], container


def _container_cgroups(container: str) -> list[str]:
    """The control groups podman made for a container (one per cgroup v1 controller, or one)."""
    if not re.fullmatch(r"[0-9a-f]{64}", container):
        return []
    found = glob.glob(f"/sys/fs/cgroup/*/libpod_parent/libpod-{container}")
    found += glob.glob(f"/sys/fs/cgroup/libpod_parent/libpod-{container}")
    return sorted({os.path.realpath(group) for group in found})  # cpu and cpuacct can be one, under two names


def _ip(*args: str) -> str | None:
    """What ``ip`` lists; None when it could not say."""
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _markers(of: int | None) -> list[Leftover]:
    """A Copilot runtime's in-use markers (``inuse.<pid>.hold`` and ``.lock``) in a host's
    user directory that no process holds open any more. A runtime holds its ``.hold``
    open for as long as it lives, and the tool removes a runtime's markers when it kills
    it; but when the tool itself is killed with SIGKILL its runtimes die with it (their
    parent-death signal) and nobody removes theirs. They carry no owner's name, so they
    are looked for only among the leftovers of owners that are gone (``of`` None), and
    told dead by what is open (device and inode, whatever mount namespace holds them),
    never by a pid, which in a simulated host is the host's own."""
    if of is not None:
        return []
    holds = list(USER_DIRS.glob("*/.cache/copilot/pkg/*/*/inuse.*.hold"))
    if not holds:
        return []
    held = _open_files()
    found = []
    for hold in holds:
        with contextlib.suppress(OSError):
            status = hold.stat()
            if (status.st_dev, status.st_ino) not in held:
                found.append(Leftover("marker", str(hold), 0))
    return found


SYSV_SHARED_MEMORY = Path("/proc/sysvipc/shm")
SHARED_MEMORY_FILES = Path("/dev/shm")


def _shared_memory(of: int | None) -> list[Leftover]:
    """The shared memory of a throwaway PostgreSQL killed with its run: the System V
    segment its postmaster made and its files in /dev/shm (PostgreSQL.<n>), which only a
    postmaster that exits by itself removes. They carry no owner's name, so, as markers,
    they are looked for only among the leftovers of owners that are gone, and only those
    of the server's own account. A segment is left over when its creator has exited and
    nobody attaches it. A file is, only while no process of that account runs at all: a
    starting server's file is mapped by none of its processes for some milliseconds
    (measured), so being unmapped proves nothing. The files are listed before the
    processes are looked at: a server starting in between makes its files after the list."""
    if of is not None:
        return []
    try:
        uid = pwd.getpwnam(SERVICE_USER).pw_uid
    except KeyError:
        return []
    found = []
    with contextlib.suppress(OSError):
        for line in SYSV_SHARED_MEMORY.read_text().splitlines()[1:]:
            _key, shmid, _perms, _size, creator, _last, attached, owner_uid, *_ = line.split()
            if int(owner_uid) == uid and attached == "0" and not alive(int(creator)):
                found.append(Leftover("shared memory segment", f"System V segment {shmid}", 0))
    files = [path for path in SHARED_MEMORY_FILES.glob("PostgreSQL.*") if _owned_by(path, uid)]
    if files and not _runs_as(uid):
        found += [Leftover("shared memory segment", str(path), 0) for path in files]
    return found


def _owned_by(path: Path, uid: int) -> bool:
    try:
        return path.stat().st_uid == uid
    except OSError:
        return False


def _runs_as(uid: int) -> bool:
    """Whether any process of the account is alive (a zombie is not)."""
    for process in psutil.process_iter(["uids", "status"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if process.info["uids"].real == uid and process.info["status"] != psutil.STATUS_ZOMBIE:
                return True
    return False


def _open_files() -> set[tuple[int, int]]:
    """(device, inode) of every file some process has open."""
    found = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):
            for fd in fd_dir.iterdir():
                with contextlib.suppress(OSError):
                    status = os.stat(fd)
                    found.add((status.st_dev, status.st_ino))
    return found


def find(of: int | None = None, forget_emptied: bool = False) -> list[Leftover]:
    """Everything the ledgers of owners that are gone name and is still there, or with
    ``of`` everything that owner's ledgers name; processes first, since they hold the
    rest, then containers before their volumes and networks, and mounts before the
    directories they are in. With ``forget_emptied`` (a cleanup, never a look), the
    ledger of a gone owner that names nothing left is forgotten: only when every listing
    answered, since a listing that failed says nothing is there when something may be."""
    every, machine, accounts = owners.ledgers(), _Machine(), _accounts()
    alive = [ledger for ledger in every if owners.running(ledger.owner)]
    # With ``of``, that owner's ledgers; without, those whose owner is gone.
    chosen = [ledger for ledger in every if (ledger.owner.pid == of if of is not None else ledger not in alive)]
    running = [ledger for ledger in alive if ledger not in chosen]
    live = {thing for ledger in running for thing in ledger.things}
    found = _processes(chosen, every, accounts)
    emptied = []
    for ledger in chosen:
        things = _of_ledger(ledger, machine, accounts, running, live)
        if not things and not any(left.owner == ledger.owner.pid for left in found):
            emptied.append(ledger)
        found += things
    if forget_emptied and of is None and machine.complete:
        for ledger in emptied:
            owners.forget(ledger)
    order = ["process", "cgroup", *ENGINE_KINDS, "namespace", "link", "mount", "directory"]
    found.sort(key=lambda left: order.index(left.kind))
    return found + _markers(of) + _shared_memory(of)


def left_alone() -> list[LeftAlone]:
    """What looks like the tool's but no ledger of this user names, or belongs to another
    user: never removed, listed by `handoff clean --dry-run` and `handoff doctor`."""
    every, machine, accounts = owners.ledgers(), _Machine(), _accounts()
    noted = {(kind, name) for ledger in every for kind, name in ledger.things}
    found = [LeftAlone(kind, name, NOT_NOTED) for _engine, kind, name in machine.engine_objects
             if not _named_by(name, every)]
    found += [LeftAlone("namespace", name, NOT_NOTED) for name in sorted(machine.namespaces)
              if name.startswith(NAME_PREFIX) and (NAMESPACE, name) not in noted]
    found += [LeftAlone("link", name, NOT_NOTED) for name in sorted(machine.links)
              if _LINK.match(name) and (LINK, name) not in noted]
    found += [LeftAlone("mount", point, NOT_NOTED) for point, source in sorted(machine.mounts.items())
              if source.startswith(MOUNT_PREFIX) and (MOUNT, point) not in noted]
    for path in [*Path(tempfile.gettempdir()).glob(f"{RUN_DIR_PREFIX}*"), *POSTGRES_DIR.glob(f"{POSTGRES_PREFIX}*")]:
        with contextlib.suppress(OSError):
            uid = path.lstat().st_uid
            if uid not in accounts:
                found.append(LeftAlone("directory", str(path), f"it belongs to another user (uid {uid})"))
            elif (DIRECTORY, str(path)) not in noted:
                found.append(LeftAlone("directory", str(path), NOT_NOTED))
    return found + _processes_left_alone(every, accounts)


def _processes_left_alone(every: list[Ledger], accounts: set[int]) -> list[LeftAlone]:
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "status", "uids"]):
        with contextlib.suppress(psutil.Error):
            if process.pid == os.getpid() or process.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            command = process.info["cmdline"] or []
            name = f"{process.pid} {' '.join(command)[:80]}"
            monitored = _monitored(command)
            marked = process.environ().get(OWNER_VARIABLE) if monitored is None else None
            if monitored is None and marked is None:
                continue
            if monitored is not None and not monitored[0].startswith(NAME_PREFIX):
                continue
            if process.info["uids"] is not None and process.info["uids"].real not in accounts:
                found.append(LeftAlone("process", name, f"it belongs to another user (uid {process.info['uids'].real})"))
            elif monitored is None and _starter(process, every) is None:
                found.append(LeftAlone("process", name, NOT_NOTED))
            elif monitored is not None and not _named_by(monitored[0], every):
                found.append(LeftAlone("process", name, NOT_NOTED))
    return found


def remove(leftovers: list[Leftover]) -> list[str]:
    """Remove the leftovers; returns what could not be removed, each with the reason."""
    failed = []
    _kill([leftover for leftover in leftovers if leftover.kind == "process"])
    for leftover in leftovers:
        if leftover.kind == "process":
            continue
        try:
            if leftover.kind in ENGINE_KINDS:
                Engine(leftover.engine).remove_sync(leftover.kind, [leftover.name])
            elif leftover.kind == "namespace":
                _checked("netns", "del", leftover.name)
            elif leftover.kind == "link":
                _checked("link", "del", leftover.name)
            elif leftover.kind == "mount":
                unmount(leftover.name, leftover.owner)
            elif leftover.kind == "shared memory segment":
                _remove_shared_memory(leftover.name)
            elif leftover.kind == "cgroup":
                os.rmdir(leftover.name)  # empty once its processes were killed above
            elif leftover.kind == "marker":
                hold = Path(leftover.name)
                hold.with_name(hold.name.removesuffix(".hold") + ".lock").unlink(missing_ok=True)
                hold.unlink(missing_ok=True)
            else:
                shutil.rmtree(leftover.name)
        except (OSError, RuntimeError, subprocess.SubprocessError) as error:
            if Path(leftover.name).exists() or leftover.kind in ("namespace", "link", "shared memory segment", *ENGINE_KINDS):
                failed.append(f"{leftover.kind} {leftover.name}: {error}")
    return failed


def _remove_shared_memory(name: str) -> None:
    if name.startswith("System V segment "):
        done = subprocess.run(["ipcrm", "-m", name.removeprefix("System V segment ")], capture_output=True, text=True)
        if done.returncode != 0 and "invalid id" not in done.stderr:  # gone already is fine
            raise RuntimeError(done.stderr.strip())
    else:
        Path(name).unlink(missing_ok=True)


def _kill(processes: list[Leftover]) -> None:
    """Kill a gone owner's processes and remove the in-use markers of the runtimes among
    them, noted before the kill: while a runtime lived its markers were not leftovers,
    so the search for dead markers did not find them."""
    victims = []
    for leftover in processes:
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(int(leftover.name.split()[0]))
            if process.create_time() == leftover.since:  # the very process found, not one with its pid now
                victims.append(process)
    kill_all(victims)


def unmount(point: str, owner: int) -> None:
    """Unmount a small file system of ``owner``'s run, also when its processes still use it.

    An unmount fails (busy) while a process has a file, a mapping or its working
    directory on the file system: a runtime a kill has not ended yet, a process of a run
    whose kill -9 is still reaching it. Those of the owner's run are killed, and the
    unmount is tried again until they have ended. Only what something outside the run
    holds — a shell left in the directory — makes it detach lazily, as a last resort: it
    is gone from the mount table and the directory tree at once, which is all a cleanup
    needs, and its memory is freed when that last user lets go. Raises OSError when the
    file system is still mounted after all."""
    deadline = time.monotonic() + UNMOUNT_SECONDS
    while True:
        done = subprocess.run(["umount", point], capture_output=True, text=True, timeout=30)
        if done.returncode == 0 or not os.path.ismount(point):
            return
        ours = [process for process in _using(point) if _owned(process, owner)]
        if not ours or time.monotonic() > deadline:
            break
        markers = runtime_markers.of(ours)  # a runtime killed here cannot remove its in-use markers
        try:
            for process in ours:
                with contextlib.suppress(psutil.Error):
                    process.kill()
            time.sleep(0.05)  # (a killed process lets go of its files as it exits, before anyone reaps it)
        finally:
            runtime_markers.remove(markers)
    lazily = subprocess.run(["umount", "-l", point], capture_output=True, text=True, timeout=30)
    if lazily.returncode != 0 and os.path.ismount(point):
        raise OSError(f"umount {point}: {(lazily.stderr or done.stderr).strip()}")


def _using(point: str) -> list[psutil.Process]:
    """The processes with a file, a mapping, or their working or root directory on the file
    system mounted at ``point``, as `fuser -m` finds them: by its device number, which a
    deleted file or a path in another mount namespace does not hide. Not this process."""
    device = os.stat(point).st_dev
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid() and _on_device(entry.path, device):
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(int(entry.name)))
    return found


def _on_device(proc: str, device: int) -> bool:
    links = [f"{proc}/cwd", f"{proc}/root", f"{proc}/exe"]
    with contextlib.suppress(OSError):
        links += [f"{proc}/fd/{fd}" for fd in os.listdir(f"{proc}/fd")]
    for link in links:
        with contextlib.suppress(OSError):
            if os.stat(link).st_dev == device:
                return True
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"{proc}/maps").read_text().splitlines():
            major, minor = line.split()[3].split(":")
            if os.makedev(int(major, 16), int(minor, 16)) == device:
                return True
    return False


def _owned(process: psutil.Process, owner: int) -> bool:
    try:
        return process.environ().get(OWNER_VARIABLE) == str(owner)
    except psutil.Error:
        return False


def _checked(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    gone = "Cannot find device" in done.stderr or "No such file" in done.stderr
    if done.returncode != 0 and not gone:
        raise RuntimeError(done.stderr.strip())


def describe(leftovers: list[Leftover]) -> str:
    kinds: dict[str, int] = {}
    for leftover in leftovers:
        kinds[leftover.kind] = kinds.get(leftover.kind, 0) + 1
    plurals = {"process": "processes", "directory": "directories"}
    return ", ".join(f"{count} {kind if count == 1 else plurals.get(kind, kind + 's')}" for kind, count in kinds.items())
