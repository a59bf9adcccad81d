"""`handoff sessions list`: the sessions of what a user has, most recent first: a Copilot
home (read from its session-state/ files, without starting a runtime), a folder of homes
(as `handoff run --keep` leaves them), a stored run (from its record) or a database
store (its session registry)."""

from __future__ import annotations

import os
import shlex
from datetime import datetime
from pathlib import Path

from handoff import places
from handoff.errors import UserError
from handoff.eventlog import SESSION_STATE
from handoff.lab import options as lab_options
from handoff.guard.ids import redacted as redacted_id
from handoff.report import fit
from handoff.report.sessions import Shown, hidden_ids, home_sessions_table, run_sessions_table, sessions_table
from handoff.runs.sessions import homes_still_there, run_sessions
from handoff.stores.database import redacted, sqlite_path
from handoff.stores.homes import home_sessions, is_home
from handoff.stores.registry import MAX_LISTED
from handoff.words import Command, StoreKind


def listing(where: str | None, owner: str | None, runs_dir: Path, show_ids: bool = False) -> str:
    """The sessions of ``where`` (None: the lab's home), only ``owner``'s when given; a
    UserError says what ``where`` is when it is none of those. Ids the rules flag are
    shown redacted, unless ``show_ids`` and the place is the user's own."""
    try:
        place = places.locate(where, lab_options.DEFAULT_HOME, runs_dir)
    except OSError as error:  # a place that cannot be looked into (/proc, a directory without permission)
        raise UserError(f"{where}: cannot be read ({error.strerror or error}: {error.filename}); give a Copilot "
                        f"home, a run or a store") from None
    show = _shown_in_full(place) if show_ids else redacted_id
    if isinstance(place, places.Store):
        return _store_listing(place.url, owner, show)
    if owner is not None and not isinstance(place, places.Run):
        raise UserError("--owner: a Copilot home records no owner (a store's registry and a run's steps do); "
                        "leave --owner out")
    if isinstance(place, places.Run):
        return _run_listing(place.found, owner, show)
    if isinstance(place, places.Homes):
        return _homes_listing(place, show)
    return _home_listing(place.path, place.default, show, MAX_LISTED)[0]


def _homes_listing(place: places.Homes, show: Shown) -> str:
    """Each home's sessions in turn, MAX_LISTED in all: the homes past that are named, not read."""
    parts = [fit.paragraph(f"{place.path} holds {_count(len(place.homes), 'Copilot home')} (as `handoff run --keep` "
                           f"leaves them):")]
    left = MAX_LISTED
    for number, home in enumerate(place.homes):
        if left <= 0:
            parts.append(fit.paragraph(f"Not read: the other {_count(len(place.homes) - number, 'home')}, past the "
                                       f"{MAX_LISTED:,} sessions listed; name one to list it."))
            break
        text, listed = _home_listing(home, False, show, left)
        parts.append(text)
        left -= listed
    return "\n\n".join(parts)


def _shown_in_full(place: places.Place) -> Shown:
    """Ids in full: only to the owner of what holds them (a home, a run's record, a SQLite
    file; a PostgreSQL store's registry is the user's by the credentials they gave)."""
    path = {places.Home: lambda: place.path, places.Homes: lambda: place.path, places.Run: lambda: place.found.path,
            places.Store: lambda: sqlite_path(place.url)}[type(place)]()
    if path is not None and path.exists():  # (one that is not there lists nothing, and says so)
        owner = path.stat().st_uid
        if owner != os.getuid():
            raise UserError(f"--show-ids: {path} belongs to another user (uid {owner}): ids that may carry a secret or "
                            f"personal data are shown in full only to their owner; leave --show-ids out")
    return lambda session_id: session_id


def _count(number: int, thing: str) -> str:
    return f"{number:,} {thing}" + ("" if number == 1 else "s")


def _home_listing(home: Path, default: bool, show: Shown, limit: int) -> tuple[str, int]:
    """A Copilot home's sessions under a first line that says which home was read, and
    how many were listed."""
    if default and not is_home(home):
        return fit.paragraph(f"The lab's home, {home}, holds no sessions yet: `handoff lab` makes one there. To list "
                             f"others: `handoff sessions list WHERE`, WHERE a Copilot home (e.g. ~/.copilot), a run "
                             f"(`handoff runs`) or a store."), 0
    try:
        listing = home_sessions(home, limit)
    except OSError as error:
        raise UserError(f"cannot list {home / SESSION_STATE}: {error.strerror or error}") from None
    found = listing.sessions
    said = f"{_count(listing.held, 'session')}, read from its {SESSION_STATE}/ without starting a runtime"
    if len(found) < listing.held:
        said += f"; listed: the {len(found):,} whose log was written last"
    if not listing.held:
        said = f"no sessions in its {SESSION_STATE}/"
    if default:
        first = (f"The lab's home, {home} (the default; `handoff sessions list WHERE` lists another home, a run or a "
                 f"store): {said}")
    else:
        first = f"Copilot home {shlex.quote(str(home))}: {said}"
    return fit.paragraph(first) + (f"\n{home_sessions_table(found, show)}" if found else "") + _hidden(
        [s.session_id for s in found], show), len(found)


def _hidden(ids: list[str], show: Shown) -> str:
    said = hidden_ids(ids) if show is redacted_id else None
    return f"\n{fit.paragraph(said)}" if said else ""


def _run_listing(found, owner: str | None, show: Shown = redacted_id) -> str:
    """A stored run's sessions, from its record, and where their files are now."""
    record = found.record
    sessions = run_sessions(record, owner)
    began = datetime.fromtimestamp(record.started_at).strftime("%Y-%m-%d %H:%M:%S")
    first = f"Run {record.id} (`handoff {record.command}`, {began}): "
    if not sessions:
        return fit.paragraph(first + ("no step acting as that owner used a session" if owner else
                                      "its steps used no session"))
    lines = [first + f"{_count(len(sessions), 'session')} its steps used, from its record ({found.path})",
             run_sessions_table(sessions, show) + _hidden([s.session_id for s in sessions], show)]
    kept = homes_still_there(sessions)
    for home in kept:
        lines.append(f"Their files are still in {home}: `handoff sessions list {shlex.quote(str(home))}` reads them.")
    used = list(dict.fromkeys(home for s in sessions for home in s.home_dirs))
    if not kept and record.command == Command.LAB and used:
        lines.append(f"The home it used, {', '.join(used)}, holds no session-state/ any more." if len(used) == 1 else
                     f"The homes it used, {', '.join(used)}, hold no session-state/ any more.")
    elif not kept and any(s.store != StoreKind.POSTGRES for s in sessions):
        lines.append("Their files were in the run's own homes and stores, removed when it ended (`handoff run --keep "
                     "DIR` keeps the homes; `handoff sessions list DIR` reads them).")
    if record.options.store and any(s.store == StoreKind.POSTGRES for s in sessions):
        lines.append(f"Its database scenarios' sessions are kept on {record.options.store}: `handoff sessions list` "
                     f"with the URL you gave lists them.")
    elif any(s.store == StoreKind.POSTGRES for s in sessions):
        lines.append("Its database scenarios' sessions were in the run's throwaway PostgreSQL, deleted when it ended.")
    return "\n".join([fit.paragraph(lines[0]), lines[1]] + [fit.paragraph(line) for line in lines[2:]])


def _store_listing(url: str, owner: str | None, show: Shown = redacted_id) -> str:
    found = places.registries(url, owner)
    listed = sum(len(sessions) for _, sessions in found)
    cut = "\n" + fit.paragraph(f"Listed: the {listed:,} most recently active sessions; the registry may hold more.") \
        if listed >= MAX_LISTED else ""
    return fit.paragraph(f"The session registry in {redacted(url)}:") + f"\n{sessions_table(found, show)}" + cut + \
        _hidden([s.session_id for _, sessions in found for s in sessions], show)
