"""Faults on the stored event log, made before a step starts: edited, torn, corrupted, or
copied only in part. They act on the log's bytes in the step's home, as a crash, a bad
disk, an interrupted copy or someone with write access would leave it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from handoff.eventlog import events_path
from handoff.fact import Fact
from handoff.faults.base import TAMPERED_VALUE, Fault, FaultDidNotApply, FaultTarget
from handoff.words import FaultKind, FaultPoint


def _log(target: FaultTarget, kind: str) -> tuple[Path, bytes]:
    log = events_path(target.home, target.session_id or "")
    if not log.is_file():
        raise FaultDidNotApply(f"{kind}: there is no event log for session {target.session_id!r} to change")
    return log, log.read_bytes()


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


@dataclass(frozen=True)
class Tamper(Fault):
    """Wherever an event states the fact, it now states another value. Events are parsed
    and written back as JSON, so quotes and backslashes in the value are handled as the
    runtime wrote them; an edit that finds nothing to change fails loudly."""

    at: str = FaultPoint.BEFORE_STEP
    turn: int = 1
    heal_after: float | None = None
    kind = FaultKind.TAMPER

    @classmethod
    def from_plan(cls, plan) -> "Tamper":
        return cls()

    async def inject(self, target: FaultTarget) -> str:
        log, data = _log(target, self.kind)
        stated = target.fact.stated_text
        replacement = Fact(TAMPERED_VALUE, target.fact.topic).stated_text
        edited, lines = 0, data.split(b"\n")
        for index, line in enumerate(lines):
            if not line.strip():
                continue
            event = json.loads(line)
            changed = _replaced(event, stated, replacement)
            if changed != event:
                lines[index] = json.dumps(changed, ensure_ascii=False, separators=(",", ":")).encode()
                edited += 1
        if not edited:
            raise FaultDidNotApply(f"tamper: no event in the log states the fact ({stated!r}): nothing was changed")
        log.write_bytes(b"\n".join(lines))
        return f"{edited} event(s) now state {TAMPERED_VALUE!r}"


def _replaced(value: Any, old: str, new: str) -> Any:
    """``value`` (parsed JSON) with ``old`` replaced by ``new`` in every string in it."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replaced(item, old, new) for item in value]
    if isinstance(value, dict):
        return {key: _replaced(item, old, new) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class TearLog(Fault):
    """The log loses its last ``cut`` bytes (default: half of its last event and the
    newline), as an append cut short by a crash on a file system leaves it."""

    at: str = FaultPoint.BEFORE_STEP
    turn: int = 1
    cut: int | None = None
    heal_after: float | None = None
    kind = FaultKind.TEAR_LOG

    @classmethod
    def from_plan(cls, plan) -> "TearLog":
        return cls(cut=plan.cut)

    async def inject(self, target: FaultTarget) -> str:
        log, data = _log(target, self.kind)
        last = _lines(data)[-1] if data else b""
        cut = self.cut if self.cut is not None else len(last) // 2 + 1
        if not 0 < cut < len(data):
            raise FaultDidNotApply(f"tear-log: cannot cut {cut} bytes off a log of {len(data)}")
        log.write_bytes(data[:-cut])
        return f"the last {cut} of {len(data)} bytes cut off (the last event is torn)"


@dataclass(frozen=True)
class CorruptLog(Fault):
    """One line of the log (default: the middle one) is no longer JSON: its first bytes
    are overwritten, its length kept, as a bad sector or a stray write leaves it."""

    at: str = FaultPoint.BEFORE_STEP
    turn: int = 1
    line: int | None = None
    heal_after: float | None = None
    kind = FaultKind.CORRUPT_LOG

    @classmethod
    def from_plan(cls, plan) -> "CorruptLog":
        return cls(line=plan.line)

    async def inject(self, target: FaultTarget) -> str:
        log, data = _log(target, self.kind)
        lines = _lines(data)
        number = self.line if self.line is not None else (len(lines) + 1) // 2
        if not 1 <= number <= len(lines) or len(lines[number - 1]) < 4:
            raise FaultDidNotApply(f"corrupt-log: the log has no line {number} to corrupt ({len(lines)} lines)")
        lines[number - 1] = b"\0" * 4 + lines[number - 1][4:]
        log.write_bytes(b"".join(line + b"\n" for line in lines))
        event_type = _event_type(_lines(data)[number - 1])
        return f"line {number} of {len(lines)} ({event_type}) is no longer JSON"


def _event_type(line: bytes) -> str:
    try:
        return str(json.loads(line).get("type"))
    except (ValueError, AttributeError):
        return "not an event"


@dataclass(frozen=True)
class CutCopy(Fault):
    """The copy of the session's folder to this step's home stopped part way: the first
    ``events`` events of events.jsonl arrived whole (default: half of them), then half of
    the next one. Counted in events rather than bytes, so the cut falls in the same event
    whatever the fact's or the system prompt's length."""

    at: str = FaultPoint.BEFORE_STEP
    turn: int = 1
    events: int | None = None
    heal_after: float | None = None
    kind = FaultKind.CUT_COPY

    @classmethod
    def from_plan(cls, plan) -> "CutCopy":
        return cls(events=plan.events)

    async def inject(self, target: FaultTarget) -> str:
        log, data = _log(target, self.kind)
        lines = _lines(data)
        whole = len(lines) // 2 if self.events is None else self.events
        if whole >= len(lines):
            raise FaultDidNotApply(f"cut-copy: the log has {len(lines)} events, so a copy of {whole} is not cut short")
        arrived = b"".join(line + b"\n" for line in lines[:whole]) + lines[whole][: len(lines[whole]) // 2]
        log.write_bytes(arrived)
        kept, events = len(arrived), len(lines)
        return f"{kept} of {len(data)} bytes of events.jsonl arrived: {whole} of {events} events whole"
