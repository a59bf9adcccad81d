"""Tables of sessions, for `handoff sessions list`: a store's registry, a Copilot home's
session folders, a stored run's steps."""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from handoff.guard.ids import redacted
from handoff.report import cells, fit
from handoff.words import StoreKind


def _when(seconds: float | None, host: str | None) -> str:
    if seconds is None:
        return cells.DASH
    return f"{datetime.fromtimestamp(seconds).strftime('%Y-%m-%d %H:%M:%S')} on {host}"


Shown = Callable[[str], str]  # how an id is printed: redacted() where the rules flag it, or in full


def hidden_ids(ids: list[str]) -> str | None:
    """A line under a table that hid some ids: how many, and how to see them."""
    hidden = sum(1 for session_id in ids if redacted(session_id) != session_id)
    if not hidden:
        return None
    return (f"{hidden} {'id is' if hidden == 1 else 'ids are'} hidden: by the rule in brackets it may carry a "
            f"secret or personal data. To copy one, `--show-ids` prints ids in full (to their owner only).")


def sessions_table(registries: list[tuple[str, list]], show: Shown = redacted) -> str:
    """The registered sessions of a store, by where each is kept: ``""`` for the store's
    own registry, else the schema a run kept (shown as its run and scenario)."""
    if not registries:
        return "no sessions registered"
    kept = any(where for where, _ in registries)
    body = []
    for where, sessions in registries:
        for s in sessions:
            row = [show(s.session_id), s.owner, _when(s.created_at, s.created_on),
                   _when(s.last_resumed_at, s.last_resumed_on),
                   _pair(s.created_runtime, s.created_sdk), _pair(s.runtime_version, s.sdk_version),
                   cells.DASH if s.turns is None else s.turns,
                   (s.summary or "")[:40]]
            body.append(([_kept_by(where)] if kept else []) + row)
    headers = ["id", "owner", "created", "last resumed", "created by", "last written by", "turns", "summary"]
    wraps = [headers.index(name) + kept for name in ("created", "last resumed", "created by", "last written by",
                                                      "summary")]
    return fit.table(body, (["kept by"] if kept else []) + headers, wraps=([0] if kept else []) + wraps)


def home_sessions_table(sessions: list, show: Shown = redacted) -> str:
    """The sessions a Copilot home holds (handoff/stores/homes.py), as read from their
    event logs."""
    headers = ["id", "created", "last written", "turns", "closed", "created by", "first prompt"]
    body = [[show(s.session_id), _at(s.created_at), _at(s.modified_at), s.turns, _home_closed(s),
             _pair(s.created_by, None), cells.short(f"({s.problem})" if s.problem else s.summary, 40)]
            for s in sessions]
    return fit.table(body, headers, wraps=(1, 2, 4, 5, 6))  # never the id: it is there to be copied


def _home_closed(session) -> str:
    """``yes``: the log ends with a session.shutdown; else what it ends with."""
    if session.closed is None:
        return cells.DASH
    return "yes" if session.closed else f"no (ends with {session.last_event})"


def run_sessions_table(sessions: list, show: Shown = redacted) -> str:
    """The sessions a stored run's steps used (handoff/runs/sessions.py), by scenario."""
    headers = ["scenario", "id", "steps", "kept in", "began", "turns", "closed", "first prompt"]
    body = [[s.scenario, show(s.session_id), f"{', '.join(s.steps)} ({', '.join(s.hosts)})",
             f"home ({', '.join(s.homes)})" if s.store == StoreKind.HOME else s.store, _at(s.started_at), s.turns,
             cells.yes_no(s.closed), cells.short(s.summary, 40)]
            for s in sessions]
    return fit.table(body, headers, wraps=(0, 2, 3, 4, 7))


def _at(seconds: float | None) -> str:
    return cells.DASH if seconds is None else datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


def _kept_by(schema: str) -> str:
    """``handoff_4e8418_cross_process_postgres`` -> ``run …4e8418, cross_process_postgres``."""
    if not schema:
        return "this store"
    tag, _, scenario = schema.removeprefix("handoff_").partition("_")
    return f"run …{tag}, {scenario}"


def _pair(runtime: str | None, sdk: str | None) -> str:
    """Runtime and SDK as the registry recorded them."""
    if not runtime:
        return cells.DASH
    return f"runtime {runtime}" + (f", SDK {sdk}" if sdk else "")
