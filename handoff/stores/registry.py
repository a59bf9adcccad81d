"""The session registry: who made which session, where, and when it was last resumed.

The runtime's own discovery (``list_sessions``, ``get_session_metadata``) reads an index
in the runtime's home, which a SessionFs provider does not share: a session resumable
from the database is invisible to them on another host. The registry lives in the same
database as the session files, so discovery works wherever resume does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from handoff.protocol import LATEST_TIME
from handoff.stores.database import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS session_registry (
    session_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    created_on TEXT NOT NULL,
    last_resumed_at DOUBLE PRECISION,
    last_resumed_on TEXT,
    runtime_version TEXT NOT NULL,
    turns INTEGER NOT NULL DEFAULT 0,
    summary TEXT,
    receipt TEXT,
    created_runtime TEXT,
    created_sdk TEXT,
    sdk_version TEXT
)
"""
LEASES = """
CREATE TABLE IF NOT EXISTS session_leases (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
)
"""
# What a listing reads of a registry, which is input like any other (SQLite keeps any value
# in any column; a registry of 300,000 rows, or of ids 100,000 characters long, was read
# whole): the most recently active rows, each text cut one past the longest it may be (a
# session id is 100 characters at most, a summary 200), so a longer one is seen as such.
MAX_LISTED = 10_000
MAX_TEXT = 1_000
_TEXT_COLUMNS = {"session_id", "owner", "created_on", "last_resumed_on", "runtime_version", "summary",
                 "created_runtime", "created_sdk", "sdk_version"}
_NAMES = ("session_id", "owner", "created_at", "created_on", "last_resumed_at", "last_resumed_on", "runtime_version",
          "turns", "summary", "created_runtime", "created_sdk", "sdk_version")
COLUMNS = ", ".join(f"substr({name}, 1, {MAX_TEXT + 1})" if name in _TEXT_COLUMNS else name for name in _NAMES)
_MOST_RECENT_FIRST = ("ORDER BY CASE WHEN COALESCE(last_resumed_at, 0) > COALESCE(created_at, 0) THEN last_resumed_at "
                      f"ELSE created_at END DESC LIMIT {MAX_LISTED}")


@dataclass(frozen=True)
class RegisteredSession:
    session_id: str
    owner: str
    created_at: float | None  # None: the row holds no time a date can show
    created_on: str
    last_resumed_at: float | None
    last_resumed_on: str | None
    runtime_version: str  # of the runtime that last created or resumed it: its last writer
    turns: int | None
    summary: str | None
    created_runtime: str | None = None
    created_sdk: str | None = None
    sdk_version: str | None = None  # of the last writer

    @property
    def last_active(self) -> float:
        return max(self.created_at or 0.0, self.last_resumed_at or 0.0)

    @classmethod
    def from_row(cls, row: tuple) -> "RegisteredSession":
        """A registry row, each value checked as it is read: a store is input (SQLite keeps
        any value in any column), so a time no date can show, a count no number of turns
        is, or text that is not text is shown as unknown, never an exception in a reader."""
        (session_id, owner, created_at, created_on, last_resumed_at, last_resumed_on, runtime_version, turns, summary,
         created_runtime, created_sdk, sdk_version) = row
        return cls(_named(session_id), _named(owner), _time(created_at),
                   _text(created_on) or "?", _time(last_resumed_at), _text(last_resumed_on),
                   _text(runtime_version) or "?", _count(turns), _text(summary), _text(created_runtime),
                   _text(created_sdk), _text(sdk_version))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and len(value) <= MAX_TEXT else None


def _named(value: object) -> str:
    """An id or an owner as a listing shows it: what is no such text says what it is."""
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return "(too long)"
    return _text(value) or "(not text)"


def _time(value: object) -> float | None:
    """Seconds since 1970 that a date can show in any time zone, else None."""
    if type(value) not in (int, float) or not 0.0 <= value <= LATEST_TIME:  # NaN is neither
        return None
    return float(value)


def _count(value: object) -> int | None:
    return value if type(value) is int and 0 <= value <= 2**31 else None


class Registry:
    def __init__(self, database: Database, create: bool = True):
        self.db = database
        if create:
            self.db.create_table(SCHEMA)
            self.db.create_table(LEASES)

    @classmethod
    def existing(cls, database: Database) -> "Registry | None":
        """The registry a store already has, for reading; None when it has none."""
        return cls(database, create=False) if database.has_table("session_registry") else None

    def created(self, session_id: str, owner: str, host: str, runtime_version: str, sdk_version: str | None = None) -> None:
        self.db.execute(
            "INSERT INTO session_registry (session_id, owner, created_at, created_on, runtime_version, created_runtime, "
            "created_sdk, sdk_version) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}) ON CONFLICT (session_id) DO NOTHING",
            (session_id, owner, time.time(), host, runtime_version, runtime_version, sdk_version, sdk_version),
        )

    def resumed(self, session_id: str, host: str, runtime_version: str, sdk_version: str | None = None) -> None:
        self.db.execute(
            "UPDATE session_registry SET last_resumed_at = {p}, last_resumed_on = {p}, runtime_version = {p}, "
            "sdk_version = {p} WHERE session_id = {p}",
            (time.time(), host, runtime_version, sdk_version, session_id),
        )

    def versions_of(self, session_id: str) -> tuple[str | None, str | None] | None:
        """(the runtime that created it, the runtime that last wrote it), None if unregistered."""
        found = self.db.row("SELECT created_runtime, runtime_version FROM session_registry WHERE session_id = {p}",
                            (session_id,))
        return None if found is None else (found[0], found[1])

    def turned(self, session_id: str, prompt: str) -> None:
        """Count a turn; the first prompt becomes the summary, as the runtime's own index does."""
        self.db.execute(
            "UPDATE session_registry SET turns = turns + 1, summary = COALESCE(summary, {p}) WHERE session_id = {p}",
            (prompt[:200], session_id),
        )

    def owner_of(self, session_id: str) -> str | None:
        found = self.db.row("SELECT owner FROM session_registry WHERE session_id = {p}", (session_id,))
        return None if found is None else found[0]

    def record_receipt(self, session_id: str, receipt: str) -> None:
        self.db.execute("UPDATE session_registry SET receipt = {p} WHERE session_id = {p}", (receipt, session_id))

    def receipt_of(self, session_id: str) -> str | None:
        found = self.db.row("SELECT receipt FROM session_registry WHERE session_id = {p}", (session_id,))
        return None if found is None else found[0]

    def take_lease(self, session_id: str, holder: str, seconds: float, now: float | None = None) -> bool:
        """Become the session's single writer for ``seconds``, unless another holder's lease
        is still live at ``now`` (the wall clock, unless the caller keeps another: the
        coordinator's lease clock). One statement, so two takers cannot both win."""
        now = time.time() if now is None else now
        taken = self.db.execute(
            "INSERT INTO session_leases (session_id, holder, expires_at) VALUES ({p}, {p}, {p}) "
            "ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at "
            "WHERE session_leases.expires_at < {p} OR session_leases.holder = excluded.holder",
            (session_id, holder, now + seconds, now),
        )
        return taken.rowcount == 1

    def release_lease(self, session_id: str, holder: str) -> None:
        self.db.execute("DELETE FROM session_leases WHERE session_id = {p} AND holder = {p}", (session_id, holder))

    def lease_holder(self, session_id: str) -> tuple[str, float] | None:
        found = self.db.row("SELECT holder, expires_at FROM session_leases WHERE session_id = {p}", (session_id,))
        return None if found is None else (found[0], found[1])

    def sessions(self, owner: str | None = None) -> list[RegisteredSession]:
        """Registered sessions, most recently active first: MAX_LISTED of them at most."""
        if owner is None:
            rows = self.db.rows(f"SELECT {COLUMNS} FROM session_registry {_MOST_RECENT_FIRST}")
        else:
            rows = self.db.rows(f"SELECT {COLUMNS} FROM session_registry WHERE owner = {{p}} {_MOST_RECENT_FIRST}",
                                (owner,))
        found = [RegisteredSession.from_row(row) for row in rows]
        return sorted(found, key=lambda s: s.last_active, reverse=True)
