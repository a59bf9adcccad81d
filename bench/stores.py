"""Benchmark 3: the same cross-process handoff through each session store, side by side.

Every store runs the handoff with the tool's worker (``bench/handoffs.py``): process A
creates, tells and closes; a new process B resumes, asks and closes.

* **shared directory** — A and B use one home (COPILOT_HOME), as `cross-process` does;
* **SQLite** / **PostgreSQL** — the tool's SessionFs provider (``handoff.stores``): each
  process has its own, empty home and every session file goes through the provider to
  the database (a throwaway PostgreSQL server is started for the run).

A store the code base does not offer yet is shown as a row "not yet available" with
the reason. To add one, append a :class:`Store` to :func:`stores` whose ``open`` returns
a function giving each handoff its store URL (None for a directory home).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import AsyncIterator, Callable

from handoff.fact import Fact
from handoff.protocol import Ready

from bench.handoffs import Handoff, worker_handoff
from bench.procs import Bench
from bench.report import Section, Table
from bench.stats import Summary, fmt

StoreUrl = Callable[[str], "str | None"]  # handoff label -> store URL (None: the home directory)


@dataclass
class Store:
    name: str
    own_homes: bool  # each process gets its own empty home (the store must carry the session)
    open: Callable[[Bench], contextlib.AbstractAsyncContextManager[StoreUrl]]


@dataclass
class Measured:
    handoffs: list[Handoff] = field(default_factory=list)


@contextlib.asynccontextmanager
async def _directory(bench: Bench) -> AsyncIterator[StoreUrl]:
    yield lambda label: None


@contextlib.asynccontextmanager
async def _sqlite(bench: Bench) -> AsyncIterator[StoreUrl]:
    folder = bench.new_dir("sqlite")
    yield lambda label: f"sqlite:///{folder / (label + '.db')}"


@contextlib.asynccontextmanager
async def _postgres(bench: Bench) -> AsyncIterator[StoreUrl]:
    from handoff.stores.postgres_server import ThrowawayPostgres
    from handoff.stores.shared import RunDatabases

    server = ThrowawayPostgres(["127.0.0.1"])
    try:
        await asyncio.to_thread(server.prepare)
        server.launch()  # from the loop's thread: the server dies with this process
        url = await asyncio.to_thread(server.wait_ready)
        databases = RunDatabases(bench.root, url, None, owned=True)

        def url_for(label: str) -> str:
            databases.prepare(label, "postgres")  # one schema per handoff, as one per scenario
            return databases.url(label, "postgres", on_simulated_host=False)

        yield url_for
    finally:
        await asyncio.to_thread(server.stop)  # a throwaway: its schemas go with its files


def stores() -> list[Store]:
    return [
        Store("shared directory (one home for A and B)", False, _directory),
        Store("SQLite via SessionFs (own empty homes)", True, _sqlite),
        Store("PostgreSQL via SessionFs (own empty homes)", True, _postgres),
    ]


async def _measure_all(bench: Bench, chosen: list[Store], repeats: int, fact: Fact,
                       failed: dict[str, str]) -> dict[str, Measured]:
    """Every store is opened first, then the repeats go round-robin over the stores, so
    each repeat compares the stores under the same machine conditions."""
    measured = {store.name: Measured() for store in chosen}
    witness = await bench.witness()
    async with contextlib.AsyncExitStack() as stack:
        url_fors = {}
        for store in chosen:
            try:
                url_fors[store.name] = await stack.enter_async_context(store.open(bench))
            except Exception as error:  # a store that fails to start is a row, not the end of the bench
                failed[store.name] = f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"
        for number in range(repeats):
            for store in chosen:
                if store.name not in url_fors:
                    continue
                label = f"store-{store.name.split()[0].lower()}-{number}"
                home_a = bench.new_dir("store-home")
                home_b = bench.new_dir("store-home") if store.own_homes else home_a
                try:
                    url = await asyncio.to_thread(url_fors[store.name], label)
                except Exception as error:
                    failed[store.name] = f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"
                    continue
                measured[store.name].handoffs.append(
                    await worker_handoff(bench, witness, label, fact, home_a, home_b, url))
    return measured


async def run(bench: Bench, repeats: int) -> Section:
    fact = Fact()
    section = Section("stores", "3. Session stores side by side (one cross-process handoff)",
                      method=__doc__.split("\n", 2)[2].strip())
    rows = []
    everything = stores()
    failed: dict[str, str] = {}
    measured = await _measure_all(bench, everything, repeats, fact, failed)
    baseline = everything[0].name
    for store in everything:
        if store.name in failed and not measured[store.name].handoffs:
            rows.append([store.name, "failed", "", "", "", "", "", "", ""])
            section.problems.append(f"{store.name}: {failed[store.name]}")
            continue
        handoffs = measured[store.name].handoffs
        good = [h for h in handoffs if h.kept]
        section.problems.extend(h.problem for h in handoffs if not h.kept)
        # per repeat: this store's handoff / the shared directory's in the same round
        paired = [h.wall_ms / base.wall_ms for h, base in zip(handoffs, measured[baseline].handoffs)
                  if h.kept and base.kept]
        rows.append([
            store.name,
            fmt(Summary.of(h.wall_ms for h in good)),
            "1" if store.name == baseline else fmt(Summary.of(paired), "×", 2),
            fmt(Summary.of(h.a.finished.wall_ms for h in good)),
            fmt(Summary.of(h.b.finished.wall_ms for h in good)),
            fmt(Summary.of(h.b.first(Ready).runtime_start_ms for h in good)),
            fmt(Summary.of(h.b.action_ms("resume") for h in good)),
            fmt(Summary.of(h.b.turn().ms for h in good)),
            f"{len(good)}/{len(handoffs)}",
        ])
    base = measured.get(baseline)
    for store in everything:
        if store.name == baseline or not base or store.name not in measured:
            continue
        pairs = [(h, b) for h, b in zip(measured[store.name].handoffs, base.handoffs) if h.kept and b.kept]
        ratio = Summary.of(h.wall_ms / b.wall_ms for h, b in pairs)
        resume = Summary.of(h.b.action_ms("resume") - b.b.action_ms("resume") for h, b in pairs)
        if ratio and resume:
            section.findings.append(
                f"{store.name.split(' (')[0]}: a handoff takes {ratio.median:.2f}× the shared directory's "
                f"(median of {ratio.count} rounds); its resume call differs by {resume.median:+.0f} ms.")
    section.tables.append(Table(
        ["store", "handoff A+B, ms", "vs shared dir, per round", "process A, ms", "process B, ms", "B runtime start, ms", "B resume, ms",
         "B ask turn, ms", "kept"], rows,
        caption=f"Median (min–max) of {repeats} handoffs per store; 'kept' counts answers that name the fact"))
    return section
