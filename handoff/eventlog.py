"""Reading a session's event log (``session-state/<id>/events.jsonl``) for evidence.

The runtime appends one JSON object per event, each with ``id``, ``parentId``, ``type``
and ``data``. Three facts in it matter for a handoff proof:

* a ``session.shutdown`` is written when a session object is closed, so a resume that is
  not preceded by one was not a resume-after-close (the lab's "forgot to close");
* ``session.resume`` records how many events it loaded (``eventCount``) and whether
  another runtime had the session open (``alreadyInUse``);
* every ``session.start`` begins a new conversation root; more than one means the id was
  used to create a session twice.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from handoff.protocol import EventLog


@dataclass(frozen=True)
class Resume:
    event_count: int | None
    already_in_use: bool | None
    closed_before: bool  # a session.shutdown since the previous start/resume
    messages_before: int = 0  # user.message events in the log before it: the turns it had to load


@dataclass(frozen=True)
class EventLogSummary:
    events: int
    starts: int
    resumes: tuple[Resume, ...] = field(default_factory=tuple)
    branch_points: int = 0  # events that more than one later event names as parent
    unreadable_lines: int = 0

    @property
    def last_resume(self) -> Resume | None:
        return self.resumes[-1] if self.resumes else None


def summarize(events: list[dict[str, Any]], unreadable_lines: int = 0) -> EventLogSummary:
    resumes: list[Resume] = []
    shutdown_since_open = False
    messages = 0
    for event in events:
        kind = event.get("type")
        if kind == "user.message":
            messages += 1
        elif kind == "session.shutdown":
            shutdown_since_open = True
        elif kind == "session.start":
            shutdown_since_open = False
        elif kind == "session.resume":
            data = event.get("data") or {}
            resumes.append(Resume(data.get("eventCount"), data.get("alreadyInUse"), shutdown_since_open, messages))
            shutdown_since_open = False
    children = Counter(e.get("parentId") for e in events if e.get("parentId"))
    return EventLogSummary(
        events=len(events),
        starts=sum(1 for e in events if e.get("type") == "session.start"),
        resumes=tuple(resumes),
        branch_points=sum(1 for count in children.values() if count > 1),
        unreadable_lines=unreadable_lines,
    )


def parse_events(log: bytes) -> tuple[list[dict[str, Any]], int]:
    """The events in a log and the number of lines that were not JSON objects (a torn
    write). Lines are cut at ``\n`` only, as the runtime cuts them: a ``\r`` or a
    U+2028 inside a line leaves it one line."""
    events, unreadable = [], 0
    for line in log.split(b"\n"):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:  # not JSON, or not UTF-8
            unreadable += 1
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            unreadable += 1
    return events, unreadable


def read_events(path: Path) -> tuple[list[dict[str, Any]], int]:
    return parse_events(path.read_bytes())


def summarize_file(path: Path) -> EventLogSummary | None:
    """Summary of the log at ``path``, or None when there is no log."""
    if not path.is_file():
        return None
    return summarize(*read_events(path))


def events_path(home: Path, session_id: str) -> Path:
    return home / "session-state" / session_id / "events.jsonl"


def report(session_id: str, log: bytes | None) -> EventLog:
    """The ``eventlog`` event a worker sends about a session's log (None when there is
    no log)."""
    if log is None:
        return EventLog(t=time.time(), session_id=session_id, found=False)
    summary = summarize(*parse_events(log))
    last = summary.last_resume
    return EventLog(
        t=time.time(), session_id=session_id, found=True, events=summary.events, starts=summary.starts,
        resumes=len(summary.resumes), closed_before_resume=last.closed_before if last else None,
        resume_event_count=last.event_count if last else None,
        already_in_use=last.already_in_use if last else None,
        branch_points=summary.branch_points, unreadable_lines=summary.unreadable_lines,
        messages_before_resume=last.messages_before if last else None,
    )
