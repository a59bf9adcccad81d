"""Where `handoff sessions list WHERE` reads sessions from, told apart from what WHERE is.

* a **Copilot home**: a directory that holds ``session-state/`` (``~/.copilot``, the
  lab's ``.state/lab-home``), read from its files (handoff/stores/homes.py); also a
  directory that holds such homes, as ``handoff run --keep DIR`` leaves them;
* a **run**: a stored run's id (or a unique part of it, or ``latest``), its directory or
  its ``run.json``: the sessions its steps used, from the record (handoff/runs/sessions.py);
* a **store**: ``sqlite:///path`` or a SQLite file, ``postgresql://…``: the session
  registry the workers keep in it (handoff/stores/registry.py), as before.

Nothing given means the lab's home, the one place a newcomer has sessions in. What is
none of these is bad input, and the message says what it is instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from handoff import inputs
from handoff.errors import UserError
from handoff.eventlog import SESSION_STATE
from handoff.runs.store import RECORD, Found, NoSuchRun, load, run_ids
from handoff.stores.database import READ_SECONDS, SqliteDatabase, connect, redacted, sqlite_url
from handoff.stores.homes import homes_below, is_home
from handoff.stores.registry import RegisteredSession

WHAT_TO_GIVE = ("give a Copilot home (the directory that holds session-state/, e.g. ~/.copilot or .state/lab-home), "
                "a run (an id `handoff runs` lists, or its directory) or a store (sqlite:///path/to/store.db or "
                "postgresql://user@host:5432/db)")
SQLITE_HEADER = b"SQLite format 3\x00"
INDEX = "session-store.db"  # the runtime's own discovery index in a home: not a registry


@dataclass(frozen=True)
class Home:
    path: Path
    default: bool = False  # nothing was named: the lab's home


@dataclass(frozen=True)
class Homes:
    path: Path  # a directory that is no home itself but holds some (`handoff run --keep DIR`)
    homes: tuple[Path, ...]


@dataclass(frozen=True)
class Run:
    found: Found


@dataclass(frozen=True)
class Store:
    url: str


Place = Home | Homes | Run | Store


def locate(where: str | None, default_home: Path, runs_root: Path) -> Place:
    """What ``where`` names; UserError, naming what it is, when it is none of the places."""
    if where is None:
        return Home(default_home, default=True)
    if not where.strip():
        raise UserError(f"sessions list: WHERE is empty; {WHAT_TO_GIVE}")
    if "://" in where:
        return Store(_store_url(where))
    path = Path(where).expanduser()
    if path.is_dir():
        return _directory(where, path, runs_root)
    if path.is_file():
        return _file(where, path, runs_root)
    if path.exists() or path.is_symlink():
        raise UserError(f"{where} is neither a directory nor a file (a dangling link, a socket or a device); "
                        f"{WHAT_TO_GIVE}")
    try:
        return Run(load(where, runs_root))
    except NoSuchRun:  # (one that is ambiguous or cannot be read is told as it is)
        raise UserError(f"{where}: no such file or directory, and no stored run by that id in {runs_root} "
                        f"(`handoff runs` lists them); {WHAT_TO_GIVE}") from None


def _store_url(url: str) -> str:
    try:
        scheme = urlsplit(url).scheme
    except ValueError:  # a bracketed host that is no IPv6 address
        raise UserError(f"{redacted(url)}: not a URL that can be read ([...] must hold an IPv6 address); "
                        f"{WHAT_TO_GIVE}") from None
    if scheme in ("postgres", "postgresql"):
        inputs.network_url(url, "store", ("postgres", "postgresql"), "postgresql://user@host:5432/db",
                           needs_host=False)
        return url
    if scheme == "sqlite":
        return url
    raise UserError(f"{redacted(url)}: a store's scheme must be sqlite, postgres or postgresql; {WHAT_TO_GIVE}")


def _directory(where: str, path: Path, runs_root: Path) -> Place:
    if is_home(path):
        return Home(path)
    if path.name == SESSION_STATE and is_home(path.parent):
        return Home(path.parent)
    if (path / RECORD).is_file():
        return Run(load(str(path), runs_root))
    if (path / "events.jsonl").is_file() and path.parent.name == SESSION_STATE:
        raise UserError(f"{where} is one session's directory (it holds events.jsonl): give its Copilot home, "
                        f"{path.parent.parent}")
    homes = homes_below(path)
    if homes:
        return Homes(path, tuple(homes))
    if run_ids(path):
        raise UserError(f"{where} holds stored runs but is no run itself: name one of them (`handoff runs --runs-dir "
                        f"{where}` lists them)")
    raise UserError(f"{where} is a directory but holds no {SESSION_STATE}/: not a Copilot home, a run or a store; "
                    f"{WHAT_TO_GIVE}")


def _file(where: str, path: Path, runs_root: Path) -> Place:
    if path.name == RECORD:
        return Run(load(str(path), runs_root))
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except OSError as error:
        raise UserError(f"cannot read {where}: {error.strerror or error}") from None
    if header == SQLITE_HEADER:
        return Store(sqlite_url(path))
    raise UserError(f"{where} is a file but neither a SQLite store nor a run's {RECORD}: not a Copilot home, a run "
                    f"or a store; {WHAT_TO_GIVE}")


def registries(url: str, owner: str | None = None) -> list[tuple[str, list[RegisteredSession]]]:
    """The registered sessions a store keeps (:func:`handoff.stores.shared.kept_registries`).
    A SQLite file without a registry is no store of this tool's: UserError says so (and,
    for a home's own index, which directory to give instead)."""
    from handoff.stores.shared import kept_registries

    database = connect(url, read_only=True)
    try:
        if isinstance(database, SqliteDatabase) and not database.has_table("session_registry"):
            path = Path(url.removeprefix("sqlite://"))
            if path.name == INDEX and is_home(path.parent):
                raise UserError(f"{path} is the runtime's own index of the Copilot home {path.parent}, not a session "
                                f"registry: give the home to list its sessions: `handoff sessions list {path.parent}`")
            raise UserError(f"{path} is a SQLite database without a session registry (no session_registry table): "
                            f"not a store a run of this tool wrote; {WHAT_TO_GIVE}")
        return kept_registries(database, owner)
    except database.errors as error:  # a registry of another shape, a damaged file, a server that went away
        cause = " ".join(str(error).split()) or type(error).__name__
        if cause == "interrupted":  # SqliteDatabase's bound on a read
            cause = (f"reading it took more than {READ_SECONDS:.0f} s, far more than a registry this tool writes takes "
                     f"(does a table compute its values?)")
        raise UserError(f"cannot read the session registry in {redacted(url)}: {cause}") from None
    finally:
        database.close()
