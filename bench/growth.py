"""``python -m bench.growth [--quick] [--sizes 10,100,1000,10000] [--budget S]`` (``make
bench-growth``): what one more event costs a session store as a conversation grows, beside
the peers, on the same databases and with the same items.

Every store is given the same 1,400-byte events (an assistant message as the runtime logs
it), one append each, until the log holds 10, 100, 1,000 and 10,000 of them. At each size
the window since the previous one is measured:

* **written per byte appended**: on SQLite and a file, the bytes this process had the
  kernel write (``write_bytes`` in /proc/self/io, after a sync), database file, WAL and
  journal alike; on PostgreSQL, the WAL the server wrote (``pg_current_wal_lsn()``), which
  every commit pays. Divided by the bytes the window appended: 1.0 is the floor of an
  append that is not synced, and a store that rewrites its log grows with the size;
* **append p50 / p99**, in milliseconds, over the window's appends;
* **resume at that size**, for the file home and the tool's stores: a new process's
  ``resume_session`` and its first answer, from a session the real runtime built to about
  N events (``bench/growth_resume.py`` says how; ``--no-resume`` skips it).

Flat is the goal: the same cost per append at 10,000 events as at 1,000, and no more than
the best peer on the same database.

The stores: a file home (what the runtime's own home does: an append to events.jsonl,
never synced), the tool's SQLite and PostgreSQL stores (``handoff/stores/files.py``), and
the peers: the OpenAI Agents SDK's ``SQLiteSession`` and ``SQLAlchemySession`` (on the
same PostgreSQL server), and LangGraph's ``SqliteSaver`` and ``PostgresSaver`` holding a
message-history graph (one invoke a message, no model: a node that adds nothing). The
peers are an optional extra (``pip install -e '.[bench]'``, which ``make bench-growth``
runs); a peer that is not installed is a row saying so. A store that takes longer than
its budget stops at the last size it reached; the sizes it did not reach say so.

It writes its own block of BENCHMARKS.md (``make bench`` keeps it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from handoff import owners

from bench import growth_plot, growth_resume
from bench.postgres import own_database, throwaway_server
from bench.procs import PROJECT_ROOT, Bench
from bench.report import Section, Table, markdown, replace_block, terminal

SIZES = (10, 100, 1_000, 10_000)
QUICK_SIZES = (10, 100, 1_000)
BUDGET_SECONDS = 300.0  # per store; LangGraph's savers, quadratic, stop short of 10,000
QUICK_BUDGET_SECONDS = 30.0
SECTION = "bench-growth"
PLOT = "docs/bench-growth.svg"  # beside the output's folder: BENCHMARKS.md's block shows it


def event(number: int) -> str:
    """One event line of ~1,400 bytes, as the runtime writes an assistant message."""
    text = f"Turn {number}: " + "The segment's customers bought less this quarter. " * 26
    line = json.dumps({"id": f"e{number:08d}", "type": "assistant.message", "data": {"content": text[:1300]}})
    return line + "\n"


ITEM_BYTES = len(event(0).encode())


# --- what a store's appends cost the machine ----------------------------------------------


def process_written() -> int:
    """Bytes this process had the kernel write to storage (its dirty pages, once synced)."""
    os.sync()
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def wal_written(url: str) -> Callable[[], int]:
    import psycopg

    def position() -> int:
        with psycopg.connect(url, autocommit=True) as connection:
            return int(connection.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')").fetchone()[0])

    return position


# --- the stores -------------------------------------------------------------------------

Append = Callable[[str], Awaitable[None]]


@dataclass
class Opened:
    append: Append
    written: Callable[[], int]
    close: Callable[[], Awaitable[None]]


@dataclass
class Store:
    name: str
    database: str  # "file", "SQLite" or "PostgreSQL": what "written" counts
    open: Callable[["Places"], Awaitable[Opened]]


@dataclass
class Places:
    folder: Path
    postgres_url: str | None  # a database of the store's own on the run's server


async def _nothing() -> None:
    return None


async def _file_home(places: Places) -> Opened:
    log = (places.folder / "events.jsonl").open("a", encoding="utf-8")

    async def append(line: str) -> None:
        log.write(line)
        log.flush()

    async def close() -> None:
        log.close()

    return Opened(append, process_written, close)


async def _tool_store(url: str, written: Callable[[], int]) -> Opened:
    from handoff.stores.database import connect
    from handoff.stores.files import SessionFiles

    database = connect(url)
    SessionFiles.create_schema(database)
    files = SessionFiles(database, "growth", "/home/bench/.copilot")

    async def append(line: str) -> None:
        await files.append_file("/state/events.jsonl", line)

    async def close() -> None:
        database.close()

    return Opened(append, written, close)


async def _tool_sqlite(places: Places) -> Opened:
    return await _tool_store(f"sqlite:///{places.folder / 'store.db'}", process_written)


async def _tool_postgres(places: Places) -> Opened:
    return await _tool_store(places.postgres_url, wal_written(places.postgres_url))


def _message(line: str) -> dict[str, Any]:
    return {"role": "assistant", "content": json.loads(line)["data"]["content"]}


async def _agents_sqlite(places: Places) -> Opened:
    from agents import SQLiteSession

    session = SQLiteSession("growth", places.folder / "agents.db")

    async def append(line: str) -> None:
        await session.add_items([_message(line)])

    async def close() -> None:
        session.close()

    return Opened(append, process_written, close)


async def _agents_sqlalchemy(places: Places) -> Opened:
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    url = places.postgres_url.replace("postgresql://", "postgresql+asyncpg://", 1)
    session = SQLAlchemySession.from_url("growth", url=url, create_tables=True)

    async def append(line: str) -> None:
        await session.add_items([_message(line)])

    async def close() -> None:
        await session.engine.dispose()

    return Opened(append, wal_written(places.postgres_url), close)


def _graph(saver: Any) -> Any:
    from langgraph.graph import START, MessagesState, StateGraph

    graph = StateGraph(MessagesState)
    graph.add_node("keep", lambda state: {})  # no model: the input message is the one added
    graph.add_edge(START, "keep")
    return graph.compile(checkpointer=saver)


def _invoker(graph: Any) -> Append:
    config = {"configurable": {"thread_id": "growth"}}

    async def append(line: str) -> None:
        graph.invoke({"messages": [_message(line)]}, config)

    return append


async def _langgraph_sqlite(places: Places) -> Opened:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(places.folder / "langgraph.db", check_same_thread=False)

    async def close() -> None:
        connection.close()

    return Opened(_invoker(_graph(SqliteSaver(connection))), process_written, close)


async def _langgraph_postgres(places: Places) -> Opened:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    connection = psycopg.connect(places.postgres_url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(connection)
    saver.setup()

    async def close() -> None:
        connection.close()

    return Opened(_invoker(_graph(saver)), wal_written(places.postgres_url), close)


STORES = (
    Store("file home (append, not synced)", "file", _file_home),
    Store("handoff SQLite store", "SQLite", _tool_sqlite),
    Store("OpenAI Agents SQLiteSession", "SQLite", _agents_sqlite),
    Store("LangGraph SqliteSaver", "SQLite", _langgraph_sqlite),
    Store("handoff PostgreSQL store", "PostgreSQL", _tool_postgres),
    Store("OpenAI Agents SQLAlchemySession", "PostgreSQL", _agents_sqlalchemy),
    Store("LangGraph PostgresSaver", "PostgreSQL", _langgraph_postgres),
)


# --- measuring ----------------------------------------------------------------------------


@dataclass
class Window:
    size: int  # events in the log at its end
    written_ratio: float  # bytes written per byte appended in the window
    p50_ms: float
    p99_ms: float


@dataclass
class Grown:
    store: Store
    windows: list[Window] = field(default_factory=list)
    stopped: str | None = None  # why it did not reach every size


async def grow(store: Store, places: Places, sizes: tuple[int, ...], budget: float) -> Grown:
    grown = Grown(store)
    try:
        opened = await store.open(places)
    except ImportError as error:
        grown.stopped = f"not installed ({error.name}): pip install -e '.[bench]'"
        return grown
    deadline = time.monotonic() + budget
    try:
        appended, before = 0, opened.written()
        for size in sizes:
            times = []
            while appended < size:
                started = time.perf_counter()
                await opened.append(event(appended))
                times.append((time.perf_counter() - started) * 1000)
                appended += 1
                if time.monotonic() > deadline:
                    grown.stopped = f"stopped at {appended:,} events: over its {budget:.0f} s budget"
                    return grown
            after = opened.written()
            grown.windows.append(Window(size, (after - before) / (len(times) * ITEM_BYTES),
                                        statistics.median(times), _percentile(times, 99)))
            before = opened.written()  # (the sync the reading made is the window's, not the next's)
    finally:
        await opened.close()
    return grown


def _percentile(values: list[float], percent: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * percent / 100))]


@dataclass
class Measured:
    grown: list[Grown]
    resumed: growth_resume.Resumed | None  # None: not asked for (--no-resume)
    plot: str | None = None  # where the plot was drawn, relative to BENCHMARKS.md


async def measure(sizes: tuple[int, ...], budget: float, root: Path, resume: bool = True) -> Measured:
    results = []
    with throwaway_server() as server_url:
        for number, store in enumerate(STORES):
            folder = root / f"store-{number}"
            folder.mkdir()
            places = Places(folder, own_database(server_url, f"growth{number}") if store.database == "PostgreSQL" else None)
            print(f"  {store.name} ...", flush=True)
            results.append(await grow(store, places, sizes, budget))
        if not resume:
            return Measured(results, None)
        bench = Bench()
        try:
            return Measured(results, await growth_resume.measure(bench, server_url, sizes))
        finally:
            await bench.shutdown()
            bench.close()


def section(measured: Measured, sizes: tuple[int, ...], seconds: float, load: str = "") -> Section:
    results = measured.grown
    headers = ["store", "written by"] + [f"{size:,}" for size in sizes]
    written = Table(headers, [], "Bytes written per byte appended, in the window ending at N events")
    timing = Table(headers, [], "Append p50 / p99 (ms), in the window ending at N events")
    for grown in results:
        by_size = {window.size: window for window in grown.windows}
        missing = "—" if grown.stopped is None else "not reached"
        written.rows.append([grown.store.name, _counted(grown.store.database)] + [
            f"{by_size[s].written_ratio:.1f}x" if s in by_size else missing for s in sizes])
        timing.rows.append([grown.store.name, grown.store.database] + [
            f"{by_size[s].p50_ms:.2f} / {by_size[s].p99_ms:.2f}" if s in by_size else missing for s in sizes])
    method = __doc__.split("\n\n", 1)[1] + (f"\n\nMeasured on {os.cpu_count()} cores; {load}." if load else "")
    found = Section(SECTION, "Growth: what one more event costs a store as the log grows", method,
                    [written, timing], seconds=seconds)
    found.findings = _findings(results, sizes)
    found.problems = [f"{grown.store.name}: {grown.stopped}" for grown in results if grown.stopped]
    if measured.plot is not None:
        # A path, not a link: this block is read at the top of the repository and, included
        # whole, in the site's docs/benchmarks.md, where no one relative link holds for
        # both; that page shows the plot itself.
        found.findings.append(f"The log-log plot of bytes written and append p50 against events: `{measured.plot}` "
                              f"(the documentation site's Benchmarks page shows it)")
    if measured.resumed is not None:
        found.tables.append(growth_resume.table(measured.resumed, sizes))
        found.findings += growth_resume.findings(measured.resumed, sizes)
        found.problems += measured.resumed.problems
    return found


def _counted(database: str) -> str:
    return {"PostgreSQL": "PostgreSQL (WAL)", "SQLite": "SQLite (db + WAL)", "file": "file"}[database]


def _findings(results: list[Grown], sizes: tuple[int, ...]) -> list[str]:
    """Whether each store's cost is flat: its largest size against the one before (bytes
    written) and against its first (append p50). A ratio over nothing is not given."""
    said = []
    for grown in results:
        if len(grown.windows) >= 2:
            last, before, first = grown.windows[-1], grown.windows[-2], grown.windows[0]
            said.append(f"{grown.store.name}: written per byte {_ratio(last.written_ratio, before.written_ratio)} at "
                        f"{last.size:,} against {before.size:,} events; append p50 {_ratio(last.p50_ms, first.p50_ms)} "
                        f"at {last.size:,} against {first.size:,}")
    return said


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "(nothing to compare with)"


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError("give whole numbers, e.g. 10,100,1000") from None
    if not sizes or sizes[0] < 1 or any(later <= earlier for earlier, later in zip(sizes, sizes[1:])):
        raise argparse.ArgumentTypeError("give sizes from 1 up, each larger than the one before, e.g. 10,100,1000")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.growth", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes 10, 100, 1000 and a 30 s budget per store")
    parser.add_argument("--sizes", type=_sizes, help="events in the log at the end of each window (default "
                                                       "10,100,1000,10000; quick 10,100,1000)")
    parser.add_argument("--budget", type=float, help="seconds each store may take (default 300, quick 30)")
    parser.add_argument("--no-resume", action="store_true", help="skip resuming each size in a new process "
                                                                  "(that needs the runtime; building 10,000 events takes minutes)")
    parser.add_argument("--output", type=Path, default=PROJECT_ROOT / "BENCHMARKS.md")
    chosen = parser.parse_args(sys.argv[1:] if argv is None else argv)
    sizes = chosen.sizes or (QUICK_SIZES if chosen.quick else SIZES)
    budget = chosen.budget or (QUICK_BUDGET_SECONDS if chosen.quick else BUDGET_SECONDS)
    owners.claim()  # its PostgreSQL server and directories are in a ledger, for `handoff clean` if it is killed
    started, load_before = time.monotonic(), os.getloadavg()[0]
    root = owners.make_directory("handoff-bench-growth-")  # in the ledger: `handoff clean` removes it after a kill
    try:
        results = asyncio.run(measure(sizes, budget, root, resume=not chosen.no_resume))
    except KeyboardInterrupt:
        print("interrupted: BENCHMARKS.md was not written", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load = f"load average (1 min) {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end"
    drawn = chosen.output.parent / PLOT
    drawn.parent.mkdir(parents=True, exist_ok=True)
    not_drawn = growth_plot.plot(results.grown, drawn)
    results.plot = None if not_drawn else drawn.relative_to(chosen.output.parent).as_posix()
    content = section(results, sizes, time.monotonic() - started, load)
    if not_drawn:
        content.problems.append(not_drawn)
    print(terminal(content), flush=True)
    text = chosen.output.read_text(encoding="utf-8") if chosen.output.exists() else "# Benchmarks\n"
    partial = chosen.output.with_name(chosen.output.name + ".partial")
    partial.write_text(replace_block(text, SECTION, markdown(content)), encoding="utf-8")
    partial.replace(chosen.output)
    print(f"wrote its block of {chosen.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
