"""Where the chat keeps its sessions, checked before the server starts: a folder, or a
PostgreSQL database that several chat servers share.

A **folder** holds the runtime's home (``home/``: the sessions' event logs), the registry
beside it (``registry.db``: who owns which session, the guard's receipts and leases) and
the app's key (``app.key``: what session ids are minted with, and passwords and logins
derived from).

A **database** (``postgresql://…``) holds all three: the session files through the
SDK's SessionFs provider, the registry, and the key in a table of its own. Each server
then keeps only its runtime's own files, in a folder of its own that goes with it; so a
second server on another machine, given the same URL, continues every conversation and
accepts the same logins.

Either way everything that matters outlives the server, so a server started again
continues every conversation, and refuses the same people.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

import psutil

from handoff.errors import UserError
from handoff.inputs import network_url
from handoff.runtime_locator import PROJECT_ROOT
from handoff.stores.database import redacted
from handoff.stores.files import SessionFiles
from handoff.worker.store import DatabaseStore, HomeStore

DEFAULT_FOLDER = PROJECT_ROOT / ".state" / "chat"
SERVERS = PROJECT_ROOT / ".state" / "chat-servers"  # with a database store: each server's own folder
KEY_FILE = "app.key"
HOME = "home"
REGISTRY = "registry.db"
KEY_BYTES = 32
DATABASE_SCHEMES = ("postgresql", "postgres")
KEY_TABLE = "CREATE TABLE IF NOT EXISTS chat_app_key (id INTEGER PRIMARY KEY CHECK (id = 1), key TEXT NOT NULL)"


@dataclass(frozen=True)
class ChatStore:
    """A folder: see the module's doc."""

    folder: Path

    @property
    def shown(self) -> str:
        return str(self.folder)

    @property
    def home(self) -> Path:
        return self.folder / HOME

    @property
    def registry_url(self) -> str:
        return f"sqlite:///{self.folder / REGISTRY}"

    def opened(self) -> HomeStore:
        """The sessions as the server's guard and runtimes reach them."""
        return HomeStore(self.home, self.registry_url)

    def files(self, opened: HomeStore | DatabaseStore) -> Callable[[str], SessionFiles] | None:
        return None  # the runtime writes its home itself

    def key(self) -> bytes:
        """The app's key, made on first use (readable by its owner only) and then read."""
        path = self.folder / KEY_FILE
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            key = path.read_bytes()
            if len(key) != KEY_BYTES:
                raise UserError(f"--store {self.folder}: {KEY_FILE} is not a key this tool made "
                                f"({len(key)} bytes, not {KEY_BYTES}); name another folder") from None
            return key
        key = secrets.token_bytes(KEY_BYTES)
        with os.fdopen(descriptor, "wb") as written:
            written.write(key)
        return key

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class DatabaseChatStore:
    """A PostgreSQL database, and this server's own folder for its runtime: see the module's doc."""

    url: str
    folder: Path  # this server's: removed by close()

    @property
    def shown(self) -> str:
        return redacted(self.url)

    @property
    def home(self) -> Path:
        return self.folder / HOME

    def opened(self) -> DatabaseStore:
        self.home.mkdir(exist_ok=True)
        return DatabaseStore(self.url, self.home)

    def files(self, opened: HomeStore | DatabaseStore) -> Callable[[str], SessionFiles] | None:
        return opened.files  # the session's files go to the database, through SessionFs

    def key(self) -> bytes:
        """The app's key, in the database: made by the first server, read by the others."""
        from handoff.stores.database import connect

        database = connect(self.url)
        try:
            database.create_table(KEY_TABLE)
            database.execute("INSERT INTO chat_app_key (id, key) VALUES (1, {p}) ON CONFLICT DO NOTHING",
                             (secrets.token_hex(KEY_BYTES),))
            stored = database.row("SELECT key FROM chat_app_key WHERE id = 1")[0]
        finally:
            database.close()
        try:
            key = bytes.fromhex(stored)
        except (TypeError, ValueError):
            key = b""
        if len(key) != KEY_BYTES:
            raise UserError(f"--store {self.shown}: its chat_app_key is not a key this tool made; name another database")
        return key

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def chat_store(where: str | Path) -> ChatStore | DatabaseChatStore:
    """``where`` as a chat store: a folder that is new, empty, or one a chat made, or a
    PostgreSQL URL whose database answers. Anything else is one line naming the problem
    (exit 2), before anything starts; a folder refused is left as it was."""
    if urlsplit(str(where)).scheme in DATABASE_SCHEMES:
        return _database(str(where))
    return _folder(Path(where))


def _database(url: str) -> DatabaseChatStore:
    network_url(url, "--store", DATABASE_SCHEMES, "postgresql://user@host:5432/chat", needs_host=False)
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=5).close()
    except Exception as error:
        said = redacted(" ".join(str(error).split()))[:300] or type(error).__name__
        raise UserError(f"--store {redacted(url)}: cannot connect ({said}); start the database, or name "
                        f"another") from None
    store = DatabaseChatStore(url, _server_folder())
    try:
        store.key()
    except BaseException:
        store.close()
        raise
    return store


def _server_folder() -> Path:
    """This server's own folder, by its pid; a server killed with SIGKILL left one behind,
    which the next server started here removes."""
    SERVERS.mkdir(parents=True, exist_ok=True)
    for left in SERVERS.iterdir():
        if left.name.isdigit() and not psutil.pid_exists(int(left.name)):
            shutil.rmtree(left, ignore_errors=True)
    folder = SERVERS / str(os.getpid())
    folder.mkdir(exist_ok=True)
    return folder


def _folder(where: Path) -> ChatStore:
    folder = where.expanduser().absolute()
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--store {where}: that is a file, not a folder; name a folder for the chat's sessions")
    if folder.is_dir():
        entries = {entry.name for entry in folder.iterdir()}
        if entries and KEY_FILE not in entries:
            raise UserError(f"--store {where}: that folder holds other files and no chat store ({KEY_FILE} is "
                            f"missing); name an empty or new folder")
        if KEY_FILE in entries:
            ChatStore(folder).key()  # a key this tool did not make is refused before anything is added
    try:
        (folder / HOME).mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{secrets.token_hex(4)}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        why = "it is not writable" if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else error.strerror
        raise UserError(f"--store {where}: cannot keep sessions there ({why}); name a folder you can write") from None
    store = ChatStore(folder)
    store.key()
    return store
