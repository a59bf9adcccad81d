"""Session files kept in a database: the storage behind the SDK's SessionFs provider.

The runtime hands a SessionFs provider every file it writes for a session
(``events.jsonl``, ``workspace.yaml``, checkpoints, ...). Here each file and directory is
a row keyed by (session id, portable path), holding what was last written whole; what is
appended after that goes into **chunk rows** (``session_file_chunks``), one an append,
numbered in order and carrying the file's size after it. An append so writes only what
it adds, however long the log has grown (it used to rewrite the whole row: quadratic in
the log's length), and a read joins the row and its chunks in order: the same bytes.
Every change is one transaction, so a writer killed half-way leaves the old file or the
new one, never a torn one. A store written before the chunks existed is read as it is
(its rows, no chunks); appends to it go into chunks.

Paths reach the provider in two forms: ``/state/...`` (the session's state directory as
configured) and absolute paths under the runtime's own home (``<home>/session-state/
<id>/...``). The home differs from machine to machine, so those are stored relative to
it (``~/session-state/<id>/...``): what host A wrote is found by host B.

The database may restart, or go away for a while, under a worker (the worker's store,
handoff/worker/store.py, opens a connection the server closed again before anything is
sent on it, or says the store is unreachable). What is run again when the connection is
lost *during* an operation is decided here, so that nothing is stored twice: a read,
always; a change (one transaction) lost before its commit, since nothing of it was
stored; a change lost *during* its commit only once a read on the new connection has
shown it was not stored. An append whose commit stays unknown because the store is out
of reach is remembered, and the runtime's retry of it (it retries a failed batch) is
checked against the store first: an append stored once is not stored again.
"""

from __future__ import annotations

import asyncio
import errno
import os
import posixpath
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, TypeVar

from handoff.stores.database import CommitUnknown, Database, StoreUnreachable

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS session_files (
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    is_dir BOOLEAN NOT NULL,
    content TEXT NOT NULL DEFAULT '',
    mtime DOUBLE PRECISION NOT NULL,
    birthtime DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, path)
)
"""
CHUNKS = """
CREATE TABLE IF NOT EXISTS session_file_chunks (
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    seq BIGINT NOT NULL,
    size_after BIGINT NOT NULL,
    mtime DOUBLE PRECISION NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (session_id, path, seq)
)
"""
# Everything stored at or below a path, in both tables (a file, or a directory's tree).
TABLES = ("session_files", "session_file_chunks")
AT_OR_BELOW = "session_id = {p} AND (path = {p} OR path LIKE {p} ESCAPE '\\')"
STATE_ROOT = "/state"
EVENTS = f"{STATE_ROOT}/events.jsonl"


class UnsureChange(StoreUnreachable):
    """The store went out of reach while a change committed: whether it was stored is not
    known until the store is back."""


def _missing(path: str) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)


@dataclass(frozen=True)
class Entry:
    is_dir: bool
    size: int
    mtime: float
    birthtime: float


class PathMap:
    """Turns the paths the runtime sends into paths that mean the same on every host."""

    def __init__(self, home: str):
        self.home_prefix = posixpath.normpath(home) + "/"

    def portable(self, path: str) -> str:
        path = posixpath.normpath(path)
        if path.startswith(self.home_prefix):
            return "~/" + path[len(self.home_prefix):]
        return path


def _size(content: str) -> int:
    """A file's content in stored bytes (UTF-8; a lone surrogate kept as the runtime sent it)."""
    return len(content.encode("utf-8", "surrogatepass"))


def _like_prefix(path: str) -> str:
    """A LIKE pattern for everything below ``path``, with LIKE's wildcards escaped."""
    escaped = path.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.rstrip("/") + "/%"


class SessionFiles:
    """One session's file tree in the database. Methods are async because the SDK's
    provider interface is; each runs its statements at once, under a lock, since one
    connection serves every call of the worker."""

    # Called with the path when an append is about to commit and the scenario asked for
    # a crash there; it never returns (the coordinator kills the worker meanwhile).
    hold_before_commit: Callable[[str], Awaitable[None]] | None = None

    def __init__(self, database: Database, session_id: str, home: str):
        self.db = database
        self.session_id = session_id
        self.paths = PathMap(home)
        self._lock = asyncio.Lock()
        # Appends whose commit is unknown (the store went away as they committed): path ->
        # (the file's length in bytes had it been stored, the text appended).
        self._unsure: dict[str, tuple[int, str]] = {}
        self.given = 0  # bytes of content written or appended, once committed: what the cost is paid for

    @staticmethod
    def create_schema(database: Database) -> None:
        database.create_table(SCHEMA)
        database.create_table(CHUNKS)

    def _entry(self, path: str) -> Entry | None:
        """A file's or directory's row; a file's size and mtime are its last chunk's, when
        something was appended since it was last written whole."""
        found = self.db.row(
            f"SELECT f.is_dir, COALESCE(c.size_after, {self.db.byte_length('f.content')}), COALESCE(c.mtime, f.mtime), "
            "f.birthtime FROM session_files f LEFT JOIN session_file_chunks c ON c.session_id = f.session_id "
            "AND c.path = f.path AND c.seq = (SELECT MAX(seq) FROM session_file_chunks "
            "WHERE session_id = f.session_id AND path = f.path) WHERE f.session_id = {p} AND f.path = {p}",
            (self.session_id, path),
        )
        return None if found is None else Entry(bool(found[0]), found[1], found[2], found[3])

    def _ensure_directories(self, path: str, now: float) -> None:
        """Create ``path`` and its parents as directories (no-op for those that exist)."""
        while path not in ("/", "", ".", "~"):
            self.db.execute(
                "INSERT INTO session_files (session_id, path, is_dir, content, mtime, birthtime) "
                "VALUES ({p}, {p}, TRUE, '', {p}, {p}) ON CONFLICT (session_id, path) DO NOTHING",
                (self.session_id, path, now, now),
            )
            path = posixpath.dirname(path)

    def _content(self, path: str) -> str | None:
        found = self._whole(path)
        return None if found is None else found[0]

    def _whole(self, path: str) -> tuple[str, bool] | None:
        """A file's content and whether it is a directory (None: no such path), read in
        one statement: the row and its chunks as of one moment, so a write, an append, a
        rename or a removal committing meanwhile is seen whole or not at all."""
        rows = self.db.rows(
            "SELECT 0 AS seq, content, is_dir FROM session_files WHERE session_id = {p} AND path = {p} "
            "UNION ALL SELECT c.seq, c.content, FALSE FROM session_file_chunks c JOIN session_files f "
            "ON f.session_id = c.session_id AND f.path = c.path WHERE c.session_id = {p} AND c.path = {p} "
            "ORDER BY seq", (self.session_id, path, self.session_id, path))
        if not rows or rows[0][0] != 0:
            return None
        return "".join(content for _, content, _ in rows), bool(rows[0][2])

    def _stored_length(self, path: str) -> int | None:
        entry = self._entry(path)
        return None if entry is None else entry.size

    # -- running again on a new connection -------------------------------------------

    def _outage(self, error: BaseException) -> StoreUnreachable:
        where = getattr(self.db, "place", "its address")
        cause = " ".join(str(error).split()) or type(error).__name__
        return StoreUnreachable(f"the session store at {where} is unreachable: the connection was lost twice ({cause})")

    def _read(self, work: Callable[[], T]) -> T:
        """A read: run again once if the connection was lost under it (the database opens a
        new one first, or says the store is unreachable)."""
        try:
            return work()
        except Exception as error:
            if not self.db.lost(error):
                raise
        try:
            return work()
        except Exception as error:
            if self.db.lost(error):
                raise self._outage(error) from error
            raise

    async def _change(self, work: Callable[[], Awaitable[None]], stored: Callable[[], bool]) -> None:
        """A change made in one transaction by ``work``. Lost before its commit, nothing of
        it was stored: run it again. Lost during its commit, it is run again only if
        ``stored`` (a read on the new connection) says it was not; when no new connection
        can be made to ask, :class:`UnsureChange`."""
        for attempt in (1, 2):
            try:
                await work()
                return
            except CommitUnknown as error:
                try:
                    if self._read(stored):
                        return
                except StoreUnreachable as outage:
                    raise UnsureChange(f"{outage}; whether the change being committed was stored is not known") \
                        from error
                if attempt == 2:
                    raise self._outage(error) from error
            except Exception as error:
                if not self.db.lost(error):
                    raise
                if attempt == 2:
                    raise self._outage(error) from error

    def _children(self, path: str) -> list[tuple[str, bool]]:
        below = self.db.rows(
            "SELECT path, is_dir FROM session_files WHERE session_id = {p} AND path LIKE {p} ESCAPE '\\'",
            (self.session_id, _like_prefix(path)),
        )
        start = len(path.rstrip("/")) + 1
        return sorted((name[start:], bool(is_dir)) for name, is_dir in below if "/" not in name[start:])

    # -- the provider's operations -------------------------------------------------

    async def read_file(self, path: str) -> str:
        key = self.paths.portable(path)
        async with self._lock:
            found = self._read(lambda: self._whole(key))
        if found is None:
            raise _missing(path)
        if found[1]:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        return found[0]

    async def write_file(self, path: str, content: str) -> None:
        key = self.paths.portable(path)
        async with self._lock:
            await self._change(lambda: self._write(key, content), stored=lambda: self._content(key) == content)
            self.given += _size(content)

    async def append_file(self, path: str, content: str) -> None:
        key = self.paths.portable(path)
        async with self._lock:
            content = self._not_yet_stored(key, content)
            if not content:
                return
            length: list[int] = []  # once the append has run: the file's length in bytes if it commits

            def stored() -> bool:
                found = self._content(key)
                return found is not None and found.endswith(content) and self._stored_length(key) == length[0]

            try:
                await self._change(lambda: self._append(path, key, content, length), stored)
            except UnsureChange:
                self._unsure[key] = (length[0], content)
                raise
            self.given += _size(content)

    def _not_yet_stored(self, key: str, content: str) -> str:
        """What of ``content`` is not in the store yet, given an earlier append to ``key``
        whose commit is unknown: the runtime retries a failed batch (alone or with the
        events that came since), and a batch that was stored after all is not stored twice."""
        if key not in self._unsure:
            return content
        length, earlier = self._unsure[key]
        found = self._read(lambda: self._content(key))  # the store still out of reach: still unknown
        del self._unsure[key]
        earlier_stored = found is not None and found.endswith(earlier) and self._stored_length(key) == length
        if earlier_stored and content.startswith(earlier):
            return content[len(earlier):]
        return content

    async def _write(self, key: str, content: str) -> None:
        """Create the file (and its parents) or replace it whole, in one transaction: its
        row holds the content, and what was appended to it before is gone."""
        now = time.time()
        with self.db.transaction():
            self._ensure_directories(posixpath.dirname(key), now)
            self.db.execute(
                "INSERT INTO session_files (session_id, path, is_dir, content, mtime, birthtime) "
                "VALUES ({p}, {p}, FALSE, {p}, {p}, {p}) ON CONFLICT (session_id, path) "
                "DO UPDATE SET content = excluded.content, mtime = excluded.mtime, is_dir = FALSE",
                (self.session_id, key, content, now, now),
            )
            self.db.execute("DELETE FROM session_file_chunks WHERE session_id = {p} AND path = {p}",
                            (self.session_id, key))

    async def _append(self, path: str, key: str, content: str, length: list[int]) -> None:
        """Add a chunk after the file's last one (creating the file and its parents when
        it is new), in one transaction; ``length`` is set to the file's new size in bytes
        before the commit. Only the chunk is written: the file's row is read, and locked
        on PostgreSQL, so two writers appending to one file queue there and the second
        numbers its chunk after the first's (SQLite lets one writer in anyway)."""
        now = time.time()
        with self.db.transaction():
            self._ensure_directories(posixpath.dirname(key), now)
            self.db.execute(
                "INSERT INTO session_files (session_id, path, is_dir, content, mtime, birthtime) "
                "VALUES ({p}, {p}, FALSE, '', {p}, {p}) ON CONFLICT (session_id, path) DO NOTHING",
                (self.session_id, key, now, now),
            )
            base, is_dir = self.db.row(f"SELECT {self.db.byte_length('content')}, is_dir FROM session_files "
                                       f"WHERE session_id = {{p}} AND path = {{p}}{self.db.locks_rows}",
                                       (self.session_id, key))
            if is_dir:
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            last = self.db.row("SELECT seq, size_after FROM session_file_chunks WHERE session_id = {p} AND path = {p} "
                               "ORDER BY seq DESC LIMIT 1", (self.session_id, key))
            seq, size = last if last is not None else (0, base)
            new_size = size + _size(content)
            self.db.execute("INSERT INTO session_file_chunks (session_id, path, seq, size_after, mtime, content) "
                            "VALUES ({p}, {p}, {p}, {p}, {p}, {p})", (self.session_id, key, seq + 1, new_size, now, content))
            length[:] = [new_size]
            if self.hold_before_commit is not None:
                await self.hold_before_commit(path)

    async def exists(self, path: str) -> bool:
        """Whether ``path`` is stored. When the store cannot say (it is out of reach), the
        answer is yes: the SDK's adapter (copilot/session_fs_provider.py) answers "no" for
        any exception raised here, and the runtime takes a missing events.jsonl for
        "Session not found". Answering yes lets its next call, a read, fail with the
        outage's own words."""
        key = self.paths.portable(path)
        async with self._lock:
            try:
                return self._read(lambda: self._entry(key)) is not None
            except StoreUnreachable:
                return True

    async def stat(self, path: str) -> Entry:
        key = self.paths.portable(path)
        async with self._lock:
            entry = self._read(lambda: self._entry(key))
        if entry is None:
            raise _missing(path)
        return entry

    async def mkdir(self, path: str, recursive: bool) -> None:
        key = self.paths.portable(path)

        async def make() -> None:
            existing = self._entry(key)
            if existing is not None:
                if existing.is_dir and recursive:
                    return
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
            parent = posixpath.dirname(key)
            if not recursive and parent not in ("/", "~") and self._entry(parent) is None:
                raise _missing(posixpath.dirname(path))
            with self.db.transaction():
                self._ensure_directories(key, time.time())

        def made() -> bool:
            entry = self._entry(key)
            return entry is not None and entry.is_dir

        async with self._lock:
            await self._change(make, made)

    async def readdir(self, path: str) -> list[tuple[str, bool]]:
        """Entries of a directory as (name, is_dir) pairs."""
        key = self.paths.portable(path)

        def listing() -> tuple[Entry | None, list[tuple[str, bool]]]:
            entry = self._entry(key)
            return entry, self._children(key) if entry is not None and entry.is_dir else []

        async with self._lock:
            entry, children = self._read(listing)
        if entry is None:
            raise _missing(path)
        if not entry.is_dir:
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
        return children

    async def rm(self, path: str, recursive: bool, force: bool) -> None:
        key = self.paths.portable(path)

        async def remove() -> None:
            entry = self._entry(key)
            if entry is None:
                if force:
                    return
                raise _missing(path)
            if entry.is_dir and not recursive and self._children(key):
                raise OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), path)
            with self.db.transaction():
                self._delete(key)

        async with self._lock:
            await self._change(remove, stored=lambda: self._entry(key) is None)

    async def rename(self, source: str, destination: str) -> None:
        """Move a file or a directory tree; an existing destination is replaced. One
        transaction: a reader sees the old name or the new one, never both or neither."""
        src, dest = self.paths.portable(source), self.paths.portable(destination)
        async with self._lock:
            await self._change(lambda: self._move(source, src, dest),
                               stored=lambda: self._entry(src) is None and self._entry(dest) is not None)

    async def _move(self, source: str, src: str, dest: str) -> None:
        now = time.time()
        if self._entry(src) is None:
            raise _missing(source)
        with self.db.transaction():
            self._delete(dest)
            self._ensure_directories(posixpath.dirname(dest), now)
            self.db.execute(
                f"UPDATE session_files SET path = CAST({{p}} AS TEXT) || substr(path, {{p}}), mtime = {{p}} WHERE {AT_OR_BELOW}",
                (dest, len(src) + 1, now, self.session_id, src, _like_prefix(src)),
            )
            self.db.execute(
                f"UPDATE session_file_chunks SET path = CAST({{p}} AS TEXT) || substr(path, {{p}}) WHERE {AT_OR_BELOW}",
                (dest, len(src) + 1, self.session_id, src, _like_prefix(src)),
            )

    def _delete(self, key: str) -> None:
        """Delete a file or a directory's tree, with what was appended to its files."""
        for table in ("session_files", "session_file_chunks"):
            self.db.execute(f"DELETE FROM {table} WHERE {AT_OR_BELOW}", (self.session_id, key, _like_prefix(key)))

    def read_events(self) -> str | None:
        """The session's event log as stored, for the worker's evidence (None if absent)."""
        return self._read(lambda: self._content(EVENTS))
