"""Resume at each size: how long a new process takes to resume a session whose log holds N
events and answer its first question, from a file home and from each database store.

For each size one worker builds a session in a file home with the real runtime: it
creates the session, tells the fact, takes filler turns until the log holds about N events
(five events a turn), and closes it. That session is then put into each database store
the way the runtime puts one there: every file of its ``session-state/<id>/`` written
whole (but the home's own lock files, which the runtime does not write through SessionFs),
and its event log appended a turn at a time (the runtime appends a turn's events
as one batch, each starting at a ``user.message``). So every store holds the same bytes,
grown by the same appends, as the runtime would have left them.

Each repeat resumes from a fresh copy (a copy of the home; a database made anew from the
loaded one, so no repeat reads a log an earlier one appended to) in a new worker process
with an empty home of its own: resume, ask, close. The time is the resume call plus the
answer to the ask; the answer must name the fact, or the repeat is a failure, not a time.
The repeats go round the stores in turn, so a disturbance on the machine falls on all.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from handoff.coordinator.specs import worker_spec
from handoff.fact import Fact
from handoff.hosts.local import LocalHost
from handoff.protocol import Backend, EventLog
from handoff.scenario import Step

from bench.postgres import own_database
from bench.procs import Bench, WorkerRun
from bench.report import Table

EVENTS_PER_TURN = 5  # measured: a filler turn adds five events (bench 2's histories)
OPENING_EVENTS = 8  # create, tell and close: eight events before any filler
REPEATS = 3
BUILD_TIMEOUT_SECONDS = 1800.0  # 2,000 filler turns: each sends the whole history, so ~5 min
STEP = "growth-resume"


def filler_turns(events: int) -> int:
    """Filler turns that bring a told-and-closed session's log to about ``events`` events."""
    return max(0, round((events - OPENING_EVENTS) / EVENTS_PER_TURN))


def turn_batches(log: str) -> list[str]:
    """The event log cut where the runtime's appends begin: a batch a turn, each starting at
    a ``user.message`` (what precedes the first is the opening batch)."""
    batches: list[str] = []
    for line in log.splitlines(keepends=True):
        try:
            kind = json.loads(line).get("type")
        except (ValueError, AttributeError):
            kind = None
        if not batches or kind == "user.message":
            batches.append(line)
        else:
            batches[-1] += line
    return batches


async def load(url: str, session_id: str, session_dir: Path) -> None:
    """Put a session from a home into the store at ``url``, as its runtime would have."""
    from handoff.stores.database import connect
    from handoff.stores.files import STATE_ROOT, SessionFiles

    database = connect(url)
    try:
        SessionFiles.create_schema(database)
        files = SessionFiles(database, session_id, "/home/bench/.copilot")
        await files.mkdir(STATE_ROOT, True)
        for path in sorted(session_dir.rglob("*")):
            target = f"{STATE_ROOT}/{path.relative_to(session_dir).as_posix()}"
            if path.name.startswith(".") or (path.is_file() and b"\0" in path.read_bytes()):
                continue  # the home's own lock files: through SessionFs the runtime writes none (and text only)
            if path.is_dir():
                await files.mkdir(target, True)
            elif path.name == "events.jsonl" and path.parent == session_dir:
                for batch in turn_batches(path.read_text(encoding="utf-8")):
                    await files.append_file(target, batch)
            else:
                await files.write_file(target, path.read_text(encoding="utf-8", errors="replace"))
    finally:
        database.close()


# --- where each store keeps a session, and a fresh copy of it for each repeat ---------------


@dataclass
class Kept:
    """One store's copy of one built session: ``fresh(label)`` gives a repeat its own copy,
    as (the home its worker starts in, the store URL or None)."""

    fresh: Callable[[str], tuple[Path, str | None]]


def _in_file_home(bench: Bench, home: Path) -> Kept:
    def fresh(label: str) -> tuple[Path, str | None]:
        copy = bench.new_dir(label) / "home"
        shutil.copytree(home, copy)
        return copy, None

    return Kept(fresh)


async def _in_sqlite(bench: Bench, session_id: str, session_dir: Path) -> Kept:
    loaded = bench.new_dir("sqlite-loaded") / "store.db"
    await load(f"sqlite:///{loaded}", session_id, session_dir)
    sqlite3.connect(loaded).close()  # the last connection has checkpointed its WAL into the file

    def fresh(label: str) -> tuple[Path, str | None]:
        folder = bench.new_dir(label)
        shutil.copyfile(loaded, folder / "store.db")
        return bench.new_dir(f"{label}-home"), f"sqlite:///{folder / 'store.db'}"

    return Kept(fresh)


async def _in_postgres(bench: Bench, server_url: str, session_id: str, name: str, session_dir: Path) -> Kept:
    await load(own_database(server_url, name), session_id, session_dir)

    def fresh(label: str) -> tuple[Path, str | None]:
        return bench.new_dir(f"{label}-home"), own_database(server_url, label.replace("-", "_"), template=name)

    return Kept(fresh)


# --- building and resuming ------------------------------------------------------------------


def _spec(bench: Bench, witness: str, step: Step, home: Path, session_id: str, fact: Fact, store: str | None) -> bytes:
    host = LocalHost("local")  # only asked what it can do: the bench starts its workers itself
    return worker_spec(STEP, step, host, host.home(home), session_id, fact=fact, backend=Backend(),
                       runtime_path=str(bench.runtime_path), witness_url=host.witness_url(witness),
                       store_url=store).to_json()


@dataclass
class Built:
    size: int  # the events asked for
    session_id: str
    home: Path
    events: int  # the events its log holds
    seconds: float


async def build(bench: Bench, witness: str, size: int, fact: Fact) -> Built | str:
    """A told-and-closed session of about ``size`` events in a home of its own, or why not."""
    session_id = f"growth-resume-{size}"
    home = bench.new_dir(f"built-{size}")
    step = Step("A", ("create", "tell", "fill", "close"), filler_turns=filler_turns(size))
    run = await bench.worker(_spec(bench, witness, step, home, session_id, fact, None), timeout=BUILD_TIMEOUT_SECONDS)
    logged = run.first(EventLog)
    if not run.ok or logged is None:
        return f"building {size:,} events failed: {_why(run)}"
    return Built(size, session_id, home, logged.events, run.finished.wall_ms / 1000)


def _why(run: WorkerRun) -> str:
    if run.errors:
        return run.errors[0]
    finished = run.finished
    return f"exit {finished.exit_code}{' (timed out)' if finished.timed_out else ''}: {finished.stderr_tail.strip()[-200:]}"


async def resume_once(bench: Bench, witness: str, built: Built, kept: Kept, label: str, fact: Fact) -> float | str:
    """One new process's resume and first answer, in ms; or why it failed."""
    home, store = await asyncio.to_thread(kept.fresh, label)
    step = Step("B", ("resume", "ask", "close"))
    run = await bench.worker(_spec(bench, witness, step, home, built.session_id, fact, store))
    resumed, turn = run.action_ms("resume"), run.turn()
    if not run.ok or resumed is None or turn is None:
        return f"{label}: {_why(run)}"
    if not fact.is_in(turn.answer):
        return f"{label}: the answer {turn.answer!r} does not name the fact"
    return resumed + turn.ms


# --- the whole measurement ------------------------------------------------------------------


STORES = ("file home", "handoff SQLite store", "handoff PostgreSQL store")


@dataclass
class Resumed:
    built: dict[int, Built] = field(default_factory=dict)
    times: dict[tuple[str, int], list[float]] = field(default_factory=dict)  # (store, size) -> ms
    problems: list[str] = field(default_factory=list)


async def measure(bench: Bench, server_url: str, sizes: tuple[int, ...], repeats: int = REPEATS) -> Resumed:
    witness = await bench.witness()
    fact = Fact()
    found = Resumed()
    for size in sizes:
        print(f"  building a session of {size:,} events ...", flush=True)
        built = await build(bench, witness, size, fact)
        if isinstance(built, str):
            found.problems.append(built)
            break  # a larger one would fail the same way, only later
        found.built[size] = built
    kept: dict[tuple[str, int], Kept] = {}
    for size, built in found.built.items():
        session_dir = built.home / "session-state" / built.session_id
        kept[STORES[0], size] = _in_file_home(bench, built.home)
        kept[STORES[1], size] = await _in_sqlite(bench, built.session_id, session_dir)
        kept[STORES[2], size] = await _in_postgres(bench, server_url, built.session_id, f"resume{size}", session_dir)
    for number in range(repeats):
        for (store, size), where in kept.items():
            print(f"  resume {number + 1}/{repeats}: {store}, {size:,} events", flush=True)
            label = f"r{number}-{STORES.index(store)}-{size}"
            took = await resume_once(bench, witness, found.built[size], where, label, fact)
            if isinstance(took, str):
                found.problems.append(f"{store}, {size:,} events: {took}")
            else:
                found.times.setdefault((store, size), []).append(took)
    return found


def table(found: Resumed, sizes: tuple[int, ...]) -> Table:
    headers = ["store"] + [f"{size:,}" for size in sizes]
    rows = [["events in the log"] + [f"{found.built[s].events:,}" if s in found.built else "not built" for s in sizes]]
    for store in STORES:
        cells = [store]
        for size in sizes:
            times = found.times.get((store, size))
            cells.append(_spread(times) if times else "—")
        rows.append(cells)
    return Table(headers, rows, "Resume in a new process and its first answer (ms), median (min–max), "
                                "at about N events")


def _spread(times: list[float]) -> str:
    return f"{statistics.median(times):.0f} ({min(times):.0f}–{max(times):.0f})"


def findings(found: Resumed, sizes: tuple[int, ...]) -> list[str]:
    """Each database store's resume against the file home's at the largest size both reached."""
    said = []
    for store in STORES[1:]:
        reached = [s for s in sizes if found.times.get((store, s)) and found.times.get((STORES[0], s))]
        if reached:
            size = reached[-1]
            mine = statistics.median(found.times[store, size])
            home = statistics.median(found.times[STORES[0], size])
            said.append(f"{store}: resume and first answer at {found.built[size].events:,} events took "
                        f"{mine / home:.2f}x the file home's ({mine:.0f} against {home:.0f} ms)")
    return said
