"""Session files kept in a database: the storage behind the SDK's SessionFs provider.

The runtime hands a SessionFs provider every file it writes for a session
(``events.jsonl``, ``workspace.yaml``, checkpoints, ...). Here each file and directory is
a row keyed by (session id, portable path). Every change is one statement or one
transaction, so a writer killed half-way leaves the old row or the new one, never a torn
one: appending to the event log is a single ``INSERT ... ON CONFLICT DO UPDATE`` that
concatenates.

Paths reach the provider in two forms: ``/state/...`` (the session's state directory as
configured) and absolute paths under the runtime's own home (``<home>/session-state/
<id>/...``). The home differs from machine to machine, so those are stored relative to
it (``~/session-state/<id>/...``): what host A wrote is found by host B.
"""

from __future__ import annotations

import asyncio
import errno
import os
import posixpath
import time
from dataclasses import dataclass
from typing import Awaitable, Callable

from handoff.stores.database import Database

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
STATE_ROOT = "/state"
EVENTS = f"{STATE_ROOT}/events.jsonl"


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

    @staticmethod
    def create_schema(database: Database) -> None:
        database.create_table(SCHEMA)

    def _entry(self, path: str) -> Entry | None:
        found = self.db.row(
            f"SELECT is_dir, {self.db.byte_length('content')}, mtime, birthtime FROM session_files "
            "WHERE session_id = {p} AND path = {p}",
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
            found = self.db.row(
                "SELECT content, is_dir FROM session_files WHERE session_id = {p} AND path = {p}",
                (self.session_id, key),
            )
        if found is None:
            raise _missing(path)
        if found[1]:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        return found[0]

    async def write_file(self, path: str, content: str) -> None:
        await self._put(path, content, "excluded.content")

    async def append_file(self, path: str, content: str) -> None:
        await self._put(path, content, "session_files.content || excluded.content", may_hold=True)

    async def _put(self, path: str, content: str, new_content: str, may_hold: bool = False) -> None:
        """Create the file (and its parents) or replace/extend it, in one transaction;
        the file's new content is one SQL expression, so an append is a single upsert."""
        key, now = self.paths.portable(path), time.time()
        async with self._lock:
            with self.db.transaction():
                self._ensure_directories(posixpath.dirname(key), now)
                self.db.execute(
                    "INSERT INTO session_files (session_id, path, is_dir, content, mtime, birthtime) "
                    "VALUES ({p}, {p}, FALSE, {p}, {p}, {p}) ON CONFLICT (session_id, path) "
                    f"DO UPDATE SET content = {new_content}, mtime = excluded.mtime, is_dir = FALSE",
                    (self.session_id, key, content, now, now),
                )
                if may_hold and self.hold_before_commit is not None:
                    await self.hold_before_commit(path)

    async def exists(self, path: str) -> bool:
        async with self._lock:
            return self._entry(self.paths.portable(path)) is not None

    async def stat(self, path: str) -> Entry:
        async with self._lock:
            entry = self._entry(self.paths.portable(path))
        if entry is None:
            raise _missing(path)
        return entry

    async def mkdir(self, path: str, recursive: bool) -> None:
        key, now = self.paths.portable(path), time.time()
        async with self._lock:
            existing = self._entry(key)
            if existing is not None:
                if existing.is_dir and recursive:
                    return
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
            parent = posixpath.dirname(key)
            if not recursive and parent not in ("/", "~") and self._entry(parent) is None:
                raise _missing(posixpath.dirname(path))
            with self.db.transaction():
                self._ensure_directories(key, now)

    async def readdir(self, path: str) -> list[tuple[str, bool]]:
        """Entries of a directory as (name, is_dir) pairs."""
        key = self.paths.portable(path)
        async with self._lock:
            entry = self._entry(key)
            if entry is None:
                raise _missing(path)
            if not entry.is_dir:
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
            return self._children(key)

    async def rm(self, path: str, recursive: bool, force: bool) -> None:
        key = self.paths.portable(path)
        async with self._lock:
            entry = self._entry(key)
            if entry is None:
                if force:
                    return
                raise _missing(path)
            if entry.is_dir and not recursive and self._children(key):
                raise OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), path)
            with self.db.transaction():
                self.db.execute(
                    "DELETE FROM session_files WHERE session_id = {p} AND (path = {p} OR path LIKE {p} ESCAPE '\\')",
                    (self.session_id, key, _like_prefix(key)),
                )

    async def rename(self, source: str, destination: str) -> None:
        """Move a file or a directory tree; an existing destination is replaced. One
        transaction: a reader sees the old name or the new one, never both or neither."""
        src, dest, now = self.paths.portable(source), self.paths.portable(destination), time.time()
        async with self._lock:
            if self._entry(src) is None:
                raise _missing(source)
            with self.db.transaction():
                self.db.execute(
                    "DELETE FROM session_files WHERE session_id = {p} AND (path = {p} OR path LIKE {p} ESCAPE '\\')",
                    (self.session_id, dest, _like_prefix(dest)),
                )
                self._ensure_directories(posixpath.dirname(dest), now)
                self.db.execute(
                    "UPDATE session_files SET path = CAST({p} AS TEXT) || substr(path, {p}), mtime = {p} "
                    "WHERE session_id = {p} AND (path = {p} OR path LIKE {p} ESCAPE '\\')",
                    (dest, len(src) + 1, now, self.session_id, src, _like_prefix(src)),
                )

    def read_events(self) -> str | None:
        """The session's event log as stored, for the worker's evidence (None if absent)."""
        found = self.db.row(
            "SELECT content FROM session_files WHERE session_id = {p} AND path = {p}", (self.session_id, EVENTS)
        )
        return None if found is None else found[0]
