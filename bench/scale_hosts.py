"""**The curve across 3 simulated hosts**: the same levels, but each handoff crosses
machines as ``cross-machine-postgres`` does. Three namespace hosts on one simulated LAN
(bench/simulated.py); handoff *i* runs A (create, tell, close) on host ``i % 3`` and B
(resume, ask, close) on host ``(i + 1) % 3``, each step with its own empty home, so the
session reaches B only through the tool's SessionFs store on a throwaway PostgreSQL
server (one schema per handoff) that the hosts reach over their links, as they reach a
witness of their own on the LAN's gateway. Workers are forked from the same zygote and
move themselves into their host. Each level is ``rounds × max(level, 3)`` handoffs, so
every host writes and resumes at every level; before the first level one uncounted
round of 3 handoffs, 3 at a time, warms the hosts, the server and its first connections
(not in the quick pass).

CPU-s per handoff here counts the workers and runtimes (as they report it, which takes in
the shell that builds a host's view of the files), the witness and the PostgreSQL server
with all its backends, ended or alive (psutil on its process tree before and after each
level). Not counted, here or in the local curve: the zygote, the process left outside a
host's PID namespace that only waits for the worker, this benchmark's own process, and
the kernel's work for the LAN (bridge, veths) where it is not charged to a process.
Making the LAN, the hosts and the server happens before the first clock starts.
"""

from __future__ import annotations

import asyncio
import time

from handoff.fact import Fact
from handoff.hosts.capability import missing_capability
from handoff.hosts.network import NetworkError
from handoff.protocol import Ready

from bench.curve import KNEE_GAIN, Level, headers, knee, rotation
from bench.handoffs import Handoff, lost, why_lost, worker_handoff
from bench.machine import cores
from bench.procs import Bench
from bench.report import Section, Table
from bench.simulated import Site, simulated_hosts

HOSTS = 3


async def _batch(bench: Bench, site: Site, name: str, level: int, count: int) -> tuple[list[Handoff], float]:
    """``count`` handoffs across the hosts, ``level`` at a time, and the seconds they took."""
    slots = asyncio.Semaphore(level)

    async def one(number: int) -> Handoff:
        async with slots:
            a, b = rotation(number, HOSTS)
            label = f"{name}-{number:03d}"
            store = await asyncio.to_thread(site.store_url, label)
            return await worker_handoff(bench, site.witness_url, label, Fact(f"Segment {name[6:]}-{number:03d}"),
                                        bench.new_dir("hosts-home"), bench.new_dir("hosts-home"), store,
                                        hosts=(site.hosts[a], site.hosts[b]))

    started = time.monotonic()
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(number)) for number in range(count)]
    return [task.result() for task in tasks], time.monotonic() - started


def _misplaced(site: Site, handoffs: list[Handoff]) -> list[str]:
    """Handoffs whose steps did not report the hostnames of the hosts they were given: the
    check that A and B really ran on two different machines."""
    found = []
    for number, handoff in enumerate(handoffs):
        for step, run, host in zip("AB", (handoff.a, handoff.b), rotation(number, HOSTS)):
            ready = run.first(Ready) if run else None
            if ready is not None and ready.hostname != site.hosts[host].hostname:
                found.append(f"{handoff.label}: step {step} ran on {ready.hostname!r}, not {site.hosts[host].hostname!r}")
    return found


async def _measure(bench: Bench, site: Site, levels: list[int], rounds: int, section: Section,
                   warmup: bool) -> tuple[list[Level], list[float]]:
    """Every level's numbers, and the PostgreSQL server's part of each level's CPU-s per handoff."""
    if warmup:
        warm, _ = await _batch(bench, site, "hosts-warmup", HOSTS, HOSTS)
        section.problems.extend(f"hosts curve, warm-up: {why_lost(h)}" for h in lost(site.evidence, warm))
    measured, postgres = [], []
    for level in levels:
        count = rounds * max(level, HOSTS)
        witness_before, postgres_before = site.services_cpu_s()
        handoffs, seconds = await _batch(bench, site, f"hosts-{level}", level, count)
        witness_after, postgres_after = site.services_cpu_s()
        missing = lost(site.evidence, handoffs)
        section.problems.extend(f"hosts curve, {level} at a time: {why_lost(h)}" for h in missing)
        section.problems.extend(f"hosts curve, {level} at a time: {wrong}" for wrong in _misplaced(site, handoffs))
        services = (witness_after - witness_before) + (postgres_after - postgres_before)
        measured.append(Level(level, count, seconds, [h.wall_ms / 1000 for h in handoffs],
                              sum(h.cpu_s for h in handoffs) + services, len(missing), cores()))
        postgres.append((postgres_after - postgres_before) / count)
    return measured, postgres


async def curve(bench: Bench, levels: list[int], rounds: int, section: Section, local: list[Level],
                warmup: bool = True) -> None:
    problem = missing_capability("namespace")
    if problem:
        section.problems.append(f"hosts curve not measured: {problem}")
        return
    try:
        async with simulated_hosts(bench, HOSTS) as site:
            measured, postgres = await _measure(bench, site, levels, rounds, section, warmup)
    except (NetworkError, RuntimeError, OSError) as error:  # the hosts or the server did not come up
        section.problems.append(f"hosts curve: {type(error).__name__}: {' '.join(str(error).split())[:300]}")
        return
    section.tables.append(Table(
        [*headers(cores()), "of the CPU-s, PostgreSQL"],
        [[*level.row(), f"{part:.2f}"] for level, part in zip(measured, postgres)],
        caption=f"The curve across {HOSTS} simulated hosts: A on one namespace host, B on the next, the session "
                f"through PostgreSQL (SessionFs), each step its own empty home"))
    section.findings.append(_finding(measured, postgres, local))


def _knee(levels: list[Level], name: str) -> str:
    if len(levels) == 1:
        [only] = levels
        return (f"{name} was measured at {only.level} at a time only: {only.rate:.2f} handoffs/s, "
                f"{only.of_bound or 0:.0%} of its CPU bound of {only.bound:.2f}/s")
    found = knee(levels)
    if found is None:
        last = levels[-1]
        return (f"{name} has no knee up to {last.level} at a time (each level gained at least "
                f"{KNEE_GAIN - 1:.0%} in handoffs/s): {last.rate:.2f} handoffs/s there, {last.of_bound or 0:.0%} of "
                f"its CPU bound of {last.bound:.2f}/s")
    return (f"{name} has its knee at {found.level} at a time: {found.rate:.2f} handoffs/s, {found.of_bound or 0:.0%} of "
            f"its CPU bound of {found.bound:.2f}/s")


def _finding(measured: list[Level], postgres: list[float], local: list[Level]) -> str:
    """Where each curve's knee is and how close to its CPU bound, then the two side by side
    at the levels both ran (the quick pass runs fewer levels across hosts)."""
    if not measured:
        return "The hosts curve has no levels."
    text = _knee(measured, f"Across {HOSTS} hosts the curve") + (
        f"; PostgreSQL takes {min(postgres):.2f}–{max(postgres):.2f} of the "
        f"{min(level.cpu_per for level in measured):.2f}–{max(level.cpu_per for level in measured):.2f} "
        f"CPU-s per handoff")
    if not local:
        return text + "."
    text += "; " + _knee(local, "the local curve")
    by_level = {level.level: level for level in local}
    both = [(here, by_level[here.level]) for here in measured if here.level in by_level]
    if both:
        text += (". Across hosts against local, at the levels both ran: handoffs/s "
                 + ", ".join(f"{h.rate / l.rate:.2f}× at {h.level}" for h, l in both)
                 + "; CPU-s per handoff " + ", ".join(f"{h.cpu_per / l.cpu_per:.2f}× at {h.level}" for h, l in both)
                 + "; p50 latency " + ", ".join(f"{h.row()[3]} s against {l.row()[3]} s at {h.level}" for h, l in both))
    return text + "."
