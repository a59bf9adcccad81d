"""Reading a session's event log (``session-state/<id>/events.jsonl``) for evidence.

The runtime appends one JSON object per event, each with ``id``, ``parentId``, ``type``
and ``data``. These facts in it matter for a handoff proof:

* a ``session.shutdown`` is written when a session object is closed, so a resume that is
  not preceded by one was not a resume-after-close (the lab's "forgot to close");
* ``session.resume`` records how many events it loaded (``eventCount``) and whether
  another runtime had the session open (``alreadyInUse``);
* every ``session.start`` begins a new conversation root; more than one means the id was
  used to create a session twice; the first one records the creating runtime's
  ``copilotVersion`` (a ``session.resume`` records no version);
* the last ``user.message`` and the ``assistant.message`` after it: a turn the runtime
  answered into the log even when the app never received the answer.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from handoff.bounded_read import Refused, read_bounded, values_in
from handoff.protocol import EventLog

SESSION_STATE = "session-state"  # a home's folder of sessions, one folder each
# The longest event log read: 10,000 events of a long session are ~15 MB (bench/growth.py's
# items); a log larger than this is refused unread, not read whole into memory. Reading
# one costs up to some eight times its size (its lines, then each decoded as text, four
# bytes a character when one needs them: a 250 MB log took 2.2 GB), so 64 MB at most.
MAX_LOG_BYTES = 64 << 20
# A 2,000-turn session's log holds about 11,000 events of some 40 values each: only a log
# of many tiny values within MAX_LOG_BYTES reaches this (200,000 lines of 70 keys each took
# `sessions list` to 2.4 GB).
MAX_LOG_VALUES = 2_000_000


@dataclass(frozen=True)
class Resume:
    event_count: int | None
    already_in_use: bool | None
    closed_before: bool  # a session.shutdown since the previous start/resume
    events_before: int  # events in the log before this session.resume: what there was to load
    messages_before: int = 0  # user.message events in the log before it: the turns it had to load


@dataclass(frozen=True)
class EventLogSummary:
    events: int
    starts: int
    resumes: tuple[Resume, ...] = field(default_factory=tuple)
    branch_points: int = 0  # events that more than one later event names as parent
    unreadable_lines: int = 0
    created_by: str | None = None  # copilotVersion of the first session.start: the creating runtime
    last_prompt: str | None = None
    last_reply: str | None = None  # the last assistant message after the last prompt
    # Milliseconds from the last prompt to that answer, by the log's own timestamps: when a
    # turn the app gave up on had its answer written, against the app's time-out.
    last_reply_ms: int | None = None

    @property
    def last_resume(self) -> Resume | None:
        return self.resumes[-1] if self.resumes else None


def summarize(events: list[dict[str, Any]], unreadable_lines: int = 0) -> EventLogSummary:
    resumes: list[Resume] = []
    shutdown_since_open = False
    prompt: str | None = None
    reply: str | None = None
    prompted_at = replied_at = None
    messages = 0
    for position, event in enumerate(events):
        kind = event.get("type")
        data = _data(event)
        if kind == "session.shutdown":
            shutdown_since_open = True
        elif kind == "session.start":
            shutdown_since_open = False
        elif kind == "session.resume":
            resumes.append(Resume(_typed(data.get("eventCount"), int), _typed(data.get("alreadyInUse"), bool),
                                  shutdown_since_open, position, messages))
            shutdown_since_open = False
        elif kind == "user.message":
            prompt, reply = _typed(data.get("content"), str), None
            prompted_at, replied_at = _timestamp(event), None
            messages += 1
        elif kind == "assistant.message" and _typed(data.get("content"), str):
            reply, replied_at = data["content"], _timestamp(event)
    children = Counter(e.get("parentId") for e in events if _typed(e.get("parentId"), str))
    first_start = next((_data(e) for e in events if e.get("type") == "session.start"), {})
    return EventLogSummary(
        events=len(events),
        starts=sum(1 for e in events if e.get("type") == "session.start"),
        resumes=tuple(resumes),
        branch_points=sum(1 for count in children.values() if count > 1),
        unreadable_lines=unreadable_lines,
        created_by=_typed(first_start.get("copilotVersion"), str),
        last_prompt=prompt,
        last_reply=reply,
        last_reply_ms=(round((replied_at - prompted_at).total_seconds() * 1000)
                       if reply is not None and prompted_at and replied_at else None),
    )


def messages(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The conversation in a log, as (role, text): each prompt ("user") and each answer
    with text ("assistant"), in the log's order; tool calls and bookkeeping left out."""
    said = []
    for event in events:
        content = _typed(_data(event).get("content"), str)
        if event.get("type") == "user.message" and content is not None:
            said.append(("user", content))
        elif event.get("type") == "assistant.message" and content:
            said.append(("assistant", content))
    return said


def _timestamp(event: dict[str, Any]) -> datetime | None:
    """An event's ``timestamp`` (ISO 8601, as the runtime writes it), None if it has none
    that reads as one."""
    text = _typed(event.get("timestamp"), str)
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
    except ValueError:
        return None
    # The runtime writes UTC with a Z; a time without a zone is taken as UTC too, so that
    # any two of a log's times can be subtracted.
    return found.replace(tzinfo=timezone.utc) if found is not None and found.tzinfo is None else found


def _data(event: dict[str, Any]) -> dict[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def _typed(value: Any, kind: type) -> Any:
    """``value`` when it has the type the runtime writes there, else None: a log is read
    as evidence (also by the guard, before a resume), so a malformed one may not break
    the reading."""
    if isinstance(value, bool) and kind is not bool:
        return None
    return value if isinstance(value, kind) else None


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
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested deeper than the parser goes
            unreadable += 1
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            unreadable += 1
    return events, unreadable


def read_events(path: Path) -> tuple[list[dict[str, Any]], int]:
    """A log's events, read within bounds (bounded_read.Refused, an OSError, beyond them):
    its size, and how many values it holds (a log of tiny values within the size would
    still decode into more objects than memory holds)."""
    log = read_bounded(path, MAX_LOG_BYTES)
    values = values_in(log)
    if values > MAX_LOG_VALUES:
        raise Refused(path, f"it has {values:,} commas, brackets and lines, more than a session's log "
                            f"({MAX_LOG_VALUES:,} at most)")
    return parse_events(log)


def summarize_file(path: Path) -> EventLogSummary | None:
    """Summary of the log at ``path``, or None when there is no log."""
    if not path.is_file():
        return None
    return summarize(*read_events(path))


def session_state(home: Path, session_id: str) -> Path:
    """Where a home keeps a session: its folder, which holds the event log."""
    return home / SESSION_STATE / session_id


def events_path(home: Path, session_id: str) -> Path:
    return session_state(home, session_id) / "events.jsonl"


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
        created_by=summary.created_by, events_before_resume=last.events_before if last else None,
        last_prompt=summary.last_prompt, last_reply=summary.last_reply, last_reply_ms=summary.last_reply_ms,
        messages_before_resume=last.messages_before if last else None,
    )
