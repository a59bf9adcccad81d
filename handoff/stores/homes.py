"""The sessions a Copilot home holds, read from its files without starting a runtime.

A home (the runtime's ``COPILOT_HOME``: ``~/.copilot``, the lab's ``.state/lab-home``, a
run's home kept with ``--keep``) keeps each session in ``session-state/<id>/``, whose
``events.jsonl`` is the session's append-only event log. What can be read from it
offline: when the session began and when it was last written (its first and last
event's ``timestamp``), how many prompts it was sent (``user.message`` events), the first
of them (what the runtime's own index shows as its summary), whether it was closed last
(a ``session.shutdown`` is written when a session object is closed) and which runtime
created it. The home's ``session-store.db``, the index ``list_sessions`` reads, is not
read: a session copied into ``session-state/`` may not be in it, and its format is the
runtime's own.
"""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from handoff.eventlog import SESSION_STATE, events_path, read_events, summarize
from handoff.protocol import LATEST_TIME
from handoff.stores.registry import MAX_LISTED

SUMMARY_LENGTH = 200  # as much of the first prompt as the registry keeps as its summary
# What one listing reads of logs in all, however many sessions it lists: 10,000 sessions of
# MAX_LOG_BYTES each would take hours. The sessions past it are listed, not read.
MAX_READ_BYTES = 1 << 30


@dataclass(frozen=True)
class HomeSession:
    session_id: str  # the name of its directory under session-state/
    created_at: float | None  # its first event's timestamp (seconds since the epoch)
    modified_at: float | None  # its last event's
    turns: int  # user.message events: the prompts it was sent
    last_event: str | None  # the last event's type; None when the log has no event
    summary: str | None  # the first prompt, on one line
    created_by: str | None  # the copilotVersion of its first session.start
    unreadable_lines: int = 0  # lines of the log that are no JSON object (a torn write)
    problem: str | None = None  # why its log could not be read (no events.jsonl, permission denied)

    @property
    def closed(self) -> bool | None:
        """Whether the last thing written was a session.shutdown; None with no event."""
        return None if self.last_event is None else self.last_event == "session.shutdown"


def is_home(path: Path) -> bool:
    return (path / SESSION_STATE).is_dir()


def homes_below(path: Path, depth: int = 2) -> list[Path]:
    """The Copilot homes inside ``path``, at most ``depth`` levels down (what `handoff
    run --keep DIR` copies: ``DIR/<scenario>/home-<step>/``), by name. Hidden
    directories and symbolic links are not followed."""
    found: list[Path] = []
    if depth <= 0:
        return found
    try:
        children = sorted(child for child in path.iterdir()
                          if not child.name.startswith(".") and not child.is_symlink() and child.is_dir())
    except OSError:
        return found
    for child in children:
        if is_home(child):
            found.append(child)
        else:
            found.extend(homes_below(child, depth - 1))
    return found


@dataclass(frozen=True)
class HomeListing:
    sessions: list[HomeSession]  # the most recently written first (those whose log has no time last)
    held: int  # the session directories session-state/ holds: more than were read when it holds many


def home_sessions(home: Path, limit: int = MAX_LISTED) -> HomeListing:
    """The sessions under ``home``'s session-state/: the ``limit`` whose events.jsonl was
    written last (by the file's time, one stat each) are read, so a home of 100,000
    sessions costs what one of ``limit`` does. OSError when session-state/ cannot be listed."""
    held = 0

    def candidates():
        nonlocal held
        with os.scandir(home / SESSION_STATE) as entries:
            for entry in entries:
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                held += 1
                yield *_log_written(home, entry.name), entry.name

    newest = heapq.nlargest(limit, candidates())
    found, budget = [], MAX_READ_BYTES
    for _, size, name in newest:  # the logs read in all are bounded too: each may be up to MAX_LOG_BYTES
        if size > budget:
            found.append(_unread(name, f"not read: this listing has read {MAX_READ_BYTES >> 20:,} MB of logs already"))
            continue
        budget -= size
        found.append(read_session(home, name))
    return HomeListing(sorted(found, key=lambda s: (s.modified_at is not None, s.modified_at or 0.0), reverse=True),
                       held)


def _unread(session_id: str, problem: str) -> HomeSession:
    return HomeSession(session_id, None, None, 0, None, None, None, problem=problem)


def _log_written(home: Path, session_id: str) -> tuple[float, int]:
    """When a session's log was last written (its file's time) and its size, from one
    stat; (-1, 0) when it has none."""
    try:
        found = os.stat(events_path(home, session_id))
    except OSError:
        return -1.0, 0
    return found.st_mtime, found.st_size


def read_session(home: Path, session_id: str) -> HomeSession:
    path = events_path(home, session_id)
    if not path.is_file():  # also a FIFO or a device in its place: never opened
        return _unread(session_id, "no events.jsonl")
    try:
        events, unreadable = read_events(path)
    except OSError as error:
        return _unread(session_id, f"cannot read events.jsonl: {error.strerror or error}")
    except MemoryError:  # a log within the bounds, under a memory limit lower still
        return _unread(session_id, "cannot read events.jsonl: more than this process's memory holds")
    created_by = summarize(events, unreadable).created_by
    times = [t for t in (_seconds(event) for event in events) if t is not None]
    prompts = [event for event in events if event.get("type") == "user.message"]
    first = next((_content(event) for event in prompts if _content(event)), None)
    last = events[-1].get("type") if events else None
    return HomeSession(
        session_id=session_id,
        created_at=times[0] if times else None,
        modified_at=times[-1] if times else None,
        turns=len(prompts),
        last_event=last if isinstance(last, str) else ("(no type)" if events else None),
        summary=" ".join(first.split())[:SUMMARY_LENGTH] if first else None,
        created_by=created_by,
        unreadable_lines=unreadable,
    )


def _content(event: dict[str, Any]) -> str | None:
    data = event.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    return content if isinstance(content, str) else None


def _seconds(event: dict[str, Any]) -> float | None:
    """An event's ``timestamp`` (ISO 8601, ``…Z``, as the runtime writes it) in seconds
    since the epoch; None when it has none that reads as a time a date can show (from
    1970 on: a log is read as evidence, so a malformed one may not break the listing)."""
    text = event.get("timestamp")
    if not isinstance(text, str):
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if when.tzinfo is None:  # the runtime writes UTC; a time without a zone is taken as UTC
            when = when.replace(tzinfo=timezone.utc)
        seconds = when.timestamp()
    except (ValueError, OverflowError, OSError):
        return None
    return seconds if 0.0 <= seconds <= LATEST_TIME else None  # later: no time zone can show it
