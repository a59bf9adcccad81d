"""The database a store lives in: a SQLite file or a PostgreSQL server, behind one small
interface so the session files and the registry are written once for both.

Queries are written with ``{p}`` where a parameter goes; each backend turns it into its
driver's placeholder. Connection failures become a one-line UserError naming the
address and the cause.
"""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from handoff.errors import UserError


class StoreUnreachable(ConnectionError):
    """The database cannot be reached: an outage of the store, never a missing session or
    file (it is no FileNotFoundError, so nothing above takes it for one)."""


class CommitUnknown(ConnectionError):
    """The connection was lost while a transaction committed: its change may or may not be
    stored, which only a read on a new connection can tell."""


class Database:
    placeholder: str
    url: str
    errors: tuple[type[BaseException], ...] = ()  # what the driver raises when a statement fails

    def __init__(self, connection: Any):
        self.connection = connection

    def lost(self, error: BaseException) -> bool:
        """Whether ``error`` means the connection itself is gone (not a refused statement):
        what a caller may run again on a new one (handoff/worker/store.py opens it)."""
        return False

    def sql(self, query: str) -> str:
        return query.replace("{p}", self.placeholder)

    def execute(self, query: str, params: tuple = ()) -> Any:
        return self.connection.execute(self.sql(query), params)

    def rows(self, query: str, params: tuple = ()) -> list[tuple]:
        return list(self.execute(query, params).fetchall())

    def row(self, query: str, params: tuple = ()) -> tuple | None:
        return self.execute(query, params).fetchone()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        raise NotImplementedError

    def byte_length(self, column: str) -> str:
        """SQL for the length of a text column in UTF-8 bytes."""
        raise NotImplementedError

    def has_table(self, name: str) -> bool:
        raise NotImplementedError

    locks_rows = ""  # what ends a SELECT to lock the rows it reads until the commit (SQLite: one writer anyway)

    # What write_cost() counts, in a few words; empty where nothing is counted.
    write_cost_is = ""

    def write_cost(self, tables: tuple[str, ...]) -> int | None:
        """Bytes the database has paid so far for changes to ``tables`` (SQLite: to this
        connection's transactions, whatever they change), as the database or the kernel
        counts them (see ``write_cost_is``); None where it cannot be told. Its growth over
        a window of appends, against the bytes appended, shows whether an append costs the
        same however long the log has grown."""
        return None

    def create_table(self, ddl: str) -> None:
        """Run a CREATE TABLE IF NOT EXISTS safely when several workers start at once
        (PostgreSQL's IF NOT EXISTS is not safe against a concurrent creator)."""
        with self.transaction():
            self._serialize_schema_changes()
            self.execute(ddl)

    def _serialize_schema_changes(self) -> None:
        pass  # SQLite's BEGIN IMMEDIATE already lets one writer in at a time

    def close(self) -> None:
        self.connection.close()


def _switch_to_wal(connection: sqlite3.Connection, attempts: int = 500) -> None:
    """Write-ahead logging, so readers never wait for the writer. Switching needs the file
    to itself for a moment, and SQLite reports "database is locked" at once instead of
    waiting out the busy timeout when another connection is opening it at the same time:
    retry for a few seconds."""
    for attempt in range(attempts):
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or attempt == attempts - 1:
                raise
            time.sleep(0.01)


def _thread_written() -> int | None:
    """Bytes this thread has handed to write calls (``wchar`` of /proc/thread-self/io), or
    None where the kernel does not say."""
    try:
        with open("/proc/thread-self/io", "rb") as counts:
            for line in counts:
                if line.startswith(b"wchar:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


# What reading a SQLite file someone gave may cost. A table can compute its values (a
# generated column, rewritten into the schema by hand): a value of a hundred million
# characters for each of 10,000 rows made a listing run for hours. No value the tool reads
# is longer than READ_VALUE_BYTES, and a read that takes longer than READ_SECONDS is
# stopped (SQLite asks every PROGRESS_STEPS instructions), saying so.
READ_VALUE_BYTES = 1 << 20
READ_SECONDS = 30.0
PROGRESS_STEPS = 10


def _bounded(connection: sqlite3.Connection) -> None:
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, READ_VALUE_BYTES)
    deadline = time.monotonic() + READ_SECONDS
    connection.set_progress_handler(lambda: time.monotonic() > deadline, PROGRESS_STEPS)


class SqliteDatabase(Database):
    placeholder = "?"
    errors = (sqlite3.Error,)
    write_cost_is = "bytes SQLite wrote in its transactions (WAL and database file), as the kernel counts them"

    def __init__(self, path: Path, read_only: bool = False):
        self.url = f"sqlite:///{path}"
        if read_only and not path.is_file():
            raise UserError(f"no SQLite store at {path}: check the path (a store is made by a run that uses it)")
        try:
            if read_only:  # never create or change a file that is only being read
                connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
                # What is only read may hold text that is not UTF-8 (a file from elsewhere):
                # it is shown with replacement characters, never a failed read.
                connection.text_factory = lambda data: data.decode("utf-8", "replace")
                _bounded(connection)
            else:
                connection = sqlite3.connect(path, isolation_level=None, timeout=30)
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # is it a database at all?
            if not read_only:
                _switch_to_wal(connection)
        except sqlite3.Error as error:
            raise UserError(f"cannot open the SQLite store {path}: {error}") from None
        super().__init__(connection)
        self._written: int | None = 0 if _thread_written() is not None else None

    def has_table(self, name: str) -> bool:
        return self.row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = {p}", (name,)) is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock up front, so two writers queue instead of
        # failing half-way through an upgrade from a read lock.
        # SQLite writes in the thread that commits, so this thread's write calls around
        # the transaction are what it cost (a checkpoint a commit triggers included).
        before = _thread_written()
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        else:
            self.connection.execute("COMMIT")
        finally:
            after = _thread_written()
            if self._written is not None and before is not None and after is not None:
                self._written += after - before

    def write_cost(self, tables: tuple[str, ...]) -> int | None:
        if self._written is None:
            return None
        # What is in the WAL is settled into the database file now, and counted: SQLite
        # would otherwise do it every ~1,000 pages, all at once, and one window of turns
        # would pay for many. (A PASSIVE checkpoint waits for no reader or writer.)
        before = _thread_written()
        self.connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        after = _thread_written()
        if before is not None and after is not None:
            self._written += after - before
        return self._written

    def byte_length(self, column: str) -> str:
        return f"length(CAST({column} AS BLOB))"


class PostgresDatabase(Database):
    placeholder = "%s"

    def __init__(self, url: str):
        import psycopg  # only runs that name a PostgreSQL store need the driver

        self.errors = (psycopg.Error,)
        self.url = url
        try:
            connection = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as error:
            where = urlsplit(url)
            place = f"{where.hostname}:{where.port or 5432}" if where.hostname else "its default local socket"
            cause = " ".join(str(error).split()) or type(error).__name__
            raise UserError(f"cannot connect to PostgreSQL at {place}: {cause}") from None
        super().__init__(connection)

    def has_table(self, name: str) -> bool:
        return self.row("SELECT to_regclass({p}) IS NOT NULL", (name,))[0]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.connection.transaction():
            yield

    def byte_length(self, column: str) -> str:
        return f"octet_length({column})"

    locks_rows = " FOR UPDATE"

    # The server's WAL is shared by every client, so it cannot tell one store's cost while
    # others write; the store's own tables can. PostgreSQL writes a changed row anew (the
    # old version stays until a vacuum), so a store that rewrites its log grows by the log.
    # What it does not see: space a vacuum freed and a later write reused. Autovacuum
    # looks at a table once a minute at most, so a fill of seconds (the store-cost rungs')
    # is counted whole; a longer one may be undercounted.
    write_cost_is = "bytes the store's tables grew (rows, TOAST and indexes), as PostgreSQL counts them"

    def write_cost(self, tables: tuple[str, ...]) -> int | None:
        found = self.row("SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(name))), 0) FROM unnest({p}::text[]) "
                         "AS name", (list(tables),))
        return int(found[0]) if found else None

    def _serialize_schema_changes(self) -> None:
        self.execute("SELECT pg_advisory_xact_lock(hashtext('handoff schema'))")


# The libpq parameters that carry a secret, wherever libpq takes parameters from: a URI's
# query (?password=...) and a keyword/value string (password=... sslpassword=...).
SECRET_PARAMETERS = ("password", "sslpassword")
_SECRET_PARAMETER = re.compile(rf"(?i)(?<![A-Za-z_])({'|'.join(SECRET_PARAMETERS)})(\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)")


def redacted(url: str | None) -> str | None:
    """A store's address with every password in it replaced by ***: the user-info's
    (percent-encoded or not) and every secret parameter's. What may be shown or stored
    with a run."""
    if not url:
        return url
    text = _SECRET_PARAMETER.sub(lambda found: f"{found.group(1)}{found.group(2)}***", url)
    try:
        parts = urlsplit(text)
    except ValueError:  # not a URL Python can split (a broken IPv6 address): hide a user-info's password all the same
        return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@/]*@", r"\1:***@", text)
    if not parts.scheme:
        return text
    user_info, at, host = parts.netloc.rpartition("@")
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret_keys = any(key.lower() in SECRET_PARAMETERS for key, _ in pairs)  # libpq decodes a key's %-escapes too
    if not (at and ":" in user_info) and not secret_keys:
        return text
    if at and ":" in user_info:
        parts = parts._replace(netloc=f"{user_info.split(':', 1)[0]}:***@{host}")
    if secret_keys:
        parts = parts._replace(query="&".join(
            f"{quote(key)}={'***' if key.lower() in SECRET_PARAMETERS else quote(value)}" for key, value in pairs))
    return urlunsplit(parts)


def sqlite_url(path: Path) -> str:
    return f"sqlite://{path.resolve()}"


def sqlite_path(url: str) -> Path | None:
    """The file a SQLite store's URL (``sqlite:///path``, or a plain path) names; None for
    any other scheme."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        return Path(url.removeprefix("sqlite://"))
    return Path(url) if scheme == "" else None


def connect(url: str, read_only: bool = False) -> Database:
    """``postgresql://...`` / ``postgres://...`` or ``sqlite:///path`` (or a plain path).
    ``read_only``: a SQLite file must exist already and is never written."""
    scheme = urlsplit(url).scheme
    if scheme in ("postgres", "postgresql"):
        return PostgresDatabase(url)
    path = sqlite_path(url)
    if path is not None:
        return SqliteDatabase(path, read_only)
    raise UserError(f"store {redacted(url)!r}: use postgresql://user@host:port/db, sqlite:///path/to/file.db, or a file path")
