"""A worker's side of where sessions are kept, one interface for both kinds:

* :class:`HomeStore` — the runtime's own home directory (``session-state/<id>/``), with an
  optional registry file beside it for owners and receipts;
* :class:`DatabaseStore` — a database reached through the SDK's SessionFs provider, with
  the registry in the same database.

Either way the worker reads a session's event log through :meth:`events_log`: its exact
bytes, as stored, for its own evidence and for the guard's receipts (text decoding or
newline translation would let a changed log look unchanged).

A worker keeps one database connection for its whole step, and a PostgreSQL server can
restart under it. :class:`ReconnectingPostgres` opens it again: before a statement or a
transaction is sent, a connection the server has closed is found (a shutting-down server
tells every idle client so, and psycopg marks a connection it saw break as closed) and
replaced, with bounded back-off, so nothing is sent on a dead connection and nothing is
sent twice. A server that stays out of reach is :class:`StoreUnreachable`, an outage in
its own words. What may be run again when a connection is lost *while* a statement runs
is decided by the session files (handoff/stores/files.py), which know what each
operation changes.
"""

from __future__ import annotations

import contextlib
import logging
import select
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from handoff.eventlog import events_path
from handoff.session_ids import safe_id
from handoff.stores.database import CommitUnknown, Database, PostgresDatabase, StoreUnreachable, connect, redacted
from handoff.stores.files import TABLES, SessionFiles
from handoff.stores.registry import Registry

log = logging.getLogger("handoff.store")

# Opening a lost connection again: at once, then after each of these waits, while within
# RECONNECT_BUDGET seconds (a PostgreSQL restart takes ~0.5 s). Once that has failed the
# store is known to be down, and each later call tries once, without waiting.
RECONNECT_WAITS = (0.1, 0.2, 0.4, 0.8, 1.6)
RECONNECT_BUDGET = 5.0
CONNECT_TIMEOUT = 10  # seconds, for one attempt (libpq's least is 2)


def _cause(error: BaseException) -> str:
    return redacted(" ".join(str(error).split())) or type(error).__name__


class ReconnectingPostgres(PostgresDatabase):
    """A PostgreSQL store whose connection outlives a restart of its server."""

    def __init__(self, url: str):
        super().__init__(url)
        where = urlsplit(url)
        self.place = f"{where.hostname}:{where.port or 5432}" if where.hostname else "its default local socket"
        self.reconnects = 0  # connections opened again in this process
        self._down = False  # the last reopening failed
        self._settings: list[tuple[str, tuple]] = []  # SET statements, made again on a new connection

    def execute(self, query: str, params: tuple = ()) -> Any:
        if self._idle():
            self._ready()
            if query.lstrip()[:4].upper() == "SET ":
                self._settings.append((query, params))
        return super().execute(query, params)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._ready()
        committing = False
        try:
            with self.connection.transaction():
                yield
                committing = True  # the body is done: leaving the block commits
        except Exception as error:
            if committing and self.lost(error):
                raise CommitUnknown(f"the connection to the session store at {self.place} was lost while a change "
                                    f"committed (it may or may not be stored): {_cause(error)}") from error
            raise

    def lost(self, error: BaseException) -> bool:
        import psycopg

        return isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)) and self.connection.closed

    def _idle(self) -> bool:
        """Not inside a transaction: a statement here may go on a new connection."""
        from psycopg.pq import TransactionStatus

        return self.connection.info.transaction_status in (TransactionStatus.IDLE, TransactionStatus.UNKNOWN)

    def _ready(self) -> None:
        """Open the connection again if the server has closed it; nothing is sent before."""
        if self.connection.closed or self._spoke_unasked():
            self._reopen()

    def _spoke_unasked(self) -> bool:
        """Input waiting on an idle connection: the server spoke without being asked, as it
        does to every client when it shuts down (anything else, a notice, only costs a new
        connection). A poll of the socket, no round trip."""
        try:
            waiting = select.poll()
            waiting.register(self.connection.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
            return bool(waiting.poll(0))
        except (OSError, ValueError):
            return True

    def _connect(self, timeout: int) -> Any:
        """A new connection, given the SET statements the old one was given."""
        import psycopg

        connection = psycopg.connect(self.url, autocommit=True, connect_timeout=timeout)
        try:
            for query, params in self._settings:
                connection.execute(self.sql(query), params)
        except BaseException:
            connection.close()
            raise
        return connection

    def _reopen(self) -> None:
        import psycopg

        started, attempts, failure = time.monotonic(), 0, None
        with contextlib.suppress(Exception):
            self.connection.close()
        for wait in (0.0, *(() if self._down else RECONNECT_WAITS)):
            if time.monotonic() - started + wait > RECONNECT_BUDGET:
                break
            time.sleep(wait)
            attempts += 1
            left = RECONNECT_BUDGET - (time.monotonic() - started)
            try:
                connection = self._connect(timeout=max(2, min(CONNECT_TIMEOUT, round(left))))
            except psycopg.Error as error:
                failure = error
                continue
            self.connection, self._down = connection, False
            self.reconnects += 1
            log.warning("the session store at %s: connection lost, opened again (attempt %d, %.2f s)",
                        self.place, attempts, time.monotonic() - started)
            return
        tried = ("it was already; tried once more" if self._down and attempts == 1 else
                 f"{attempts} attempt{'s' if attempts > 1 else ''} in {time.monotonic() - started:.1f} s")
        self._down = True
        raise StoreUnreachable(f"the session store at {self.place} is unreachable: {_cause(failure)} ({tried})")


def open_database(url: str) -> Database:
    """The worker's database: a PostgreSQL one reconnects after a restart of its server."""
    return ReconnectingPostgres(url) if urlsplit(url).scheme in ("postgres", "postgresql") else connect(url)


@dataclass(frozen=True)
class StoreCost:
    """A store's running totals: the bytes its files were given (written whole or
    appended) and the bytes the database paid for them (``written_is`` says how counted)."""

    given: int
    written: int
    written_is: str


class HomeStore:
    files: Callable[[str], SessionFiles] | None = None  # no SessionFs provider: the runtime writes its home

    def __init__(self, home: Path, registry_url: str | None):
        self.home = home
        self._database = open_database(registry_url) if registry_url else None
        self.registry = Registry(self._database) if self._database else None

    def events_log(self, session_id: str) -> bytes | None:
        if not safe_id(session_id):
            return None  # not a name the runtime would have made a directory of
        path = events_path(self.home, session_id)
        return path.read_bytes() if path.is_file() else None

    def cost(self) -> StoreCost | None:
        return None  # the runtime writes its home itself: nothing passes through a store to count

    def close(self) -> None:
        if self._database:
            self._database.close()


class DatabaseStore:
    def __init__(self, url: str, home: Path):
        self.database = open_database(url)
        SessionFiles.create_schema(self.database)
        self.registry = Registry(self.database)
        self.home = str(home)
        self._files: dict[str, SessionFiles] = {}

    def files(self, session_id: str) -> SessionFiles:
        """The one SessionFiles of a session in this worker (the provider and the
        worker's own evidence reading must see the same object)."""
        if session_id not in self._files:
            self._files[session_id] = SessionFiles(self.database, session_id, self.home)
        return self._files[session_id]

    def cost(self) -> StoreCost | None:
        """What the session files were given so far, and what the database paid for them."""
        written = self.database.write_cost(TABLES)
        if written is None:
            return None
        return StoreCost(sum(files.given for files in self._files.values()), written, self.database.write_cost_is)

    def events_log(self, session_id: str) -> bytes | None:
        text = self.files(session_id).read_events()
        return None if text is None else text.encode("utf-8", errors="surrogateescape")

    def close(self) -> None:
        self.database.close()


def open_store(database_url: str | None, registry_url: str | None, home: Path) -> HomeStore | DatabaseStore:
    return DatabaseStore(database_url, home) if database_url else HomeStore(home, registry_url)
