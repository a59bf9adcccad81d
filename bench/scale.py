"""Benchmark 5: many sessions handed over at once, with bounded concurrency.

N handoffs, each its own session, home and fact ("Segment 007" for handoff 7, so an
answer naming another handoff's fact would show): process A_i creates, tells and closes;
process B_i, a new process, resumes, asks and closes. The processes are the tool's own
workers (``python -m handoff.worker`` fed a WorkerSpec on stdin, as the coordinator
does, see ``bench/handoffs.py``), all against one witness.

How many run at once is computed, not guessed: one handoff is run first while the RSS of
its worker and runtime (and anything they start) is sampled every 50 ms; the bound is
``available memory / that peak``, capped at ``2 × cores``. A handoff holds its slot for
both of its processes, which run one after the other, so at most ``bound`` runtimes live
at a time. During the N handoffs the RSS of every child (the witness excepted) is
sampled every 100 ms for the peak, and the number of live runtime processes (argv[0]
is the runtime's executable) in the fullest sample; a runtime that is being killed as
the next one starts can make that one more than the bound. RSS counts pages shared between processes once per
process, so the peaks are upper bounds.

A handoff is *kept* when B's answer names its own fact and the witness's log shows the
fact was in what B's runtime sent it.

**The curve**: handoffs with workers forked from the tool's zygote (as ``handoff run``
starts them), at 1, 2, 4 and 8 at a time, each level a batch of its own (``rounds × max(level,
2)`` handoffs, all queued at once): handoffs per second over the batch, the latency of one
handoff (A's fork to B's end) at p50/p95/p99, and the CPU seconds per handoff (what the
workers report for themselves and their runtimes, plus the witness's). The CPU bound is
``cores / CPU-s per handoff``: no scheduling gets more handoffs per second out of this
machine. With a few dozen samples per level, p95 and p99 are close to the slowest one.
"""

from __future__ import annotations

import asyncio
import time

import psutil

from handoff import capacity, scenario_files
from handoff.fact import Fact

from bench import scale_hosts
from bench.curve import Level, headers
from bench.handoffs import Handoff, lost, why_lost, witness_saw_fact, worker_handoff
from bench.machine import cores
from bench.procs import Bench, RssSampler
from bench.report import Section, Table
from bench.stats import Summary, fmt

MIB = 2**20


async def _calibrate(bench: Bench) -> tuple[int, Handoff]:
    """Peak RSS of one worker and its runtime while they work (bytes)."""
    sampler = RssSampler(interval=0.05, roots=set())
    sampler.start()
    try:
        home = bench.new_dir("scale-home")
        witness = await bench.witness()
        handoff = await worker_handoff(bench, witness, "scale-calibration", Fact("Calibration"), home, home,
                                       on_spawn=sampler.roots.add)
    finally:
        await sampler.stop()
    return sampler.peak_bytes, handoff


async def _many(bench: Bench, count: int, bound: int) -> tuple[list[Handoff], float, RssSampler]:
    witness = await bench.witness()
    slots = asyncio.Semaphore(bound)

    async def one(number: int) -> Handoff:
        async with slots:
            home = bench.new_dir("scale-home")
            return await worker_handoff(bench, witness, f"scale-{count}-{number:03d}", Fact(f"Segment {number:03d}"),
                                        home, home)

    sampler = RssSampler(interval=0.1, exclude={bench.witness_pid} if bench.witness_pid else set())
    sampler.start()
    started = time.monotonic()
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(number)) for number in range(count)]
    finally:
        await sampler.stop()
    return [task.result() for task in tasks], (time.monotonic() - started), sampler


async def _level(bench: Bench, level: int, count: int) -> tuple[list[Handoff], float, float]:
    """``count`` forked handoffs, ``level`` at a time: the handoffs, the seconds they took,
    the witness's CPU seconds meanwhile."""
    witness = await bench.witness()
    slots = asyncio.Semaphore(level)
    witness_process = psutil.Process(bench.witness_pid) if bench.witness_pid else None

    def witness_cpu() -> float:
        if witness_process is None:
            return 0.0
        times = witness_process.cpu_times()
        return times.user + times.system

    async def one(number: int) -> Handoff:
        async with slots:
            home = bench.new_dir("curve-home")
            return await worker_handoff(bench, witness, f"curve-{level}-{number:03d}",
                                        Fact(f"Segment {level}-{number:03d}"), home, home, forked=True)

    cpu_before, started = witness_cpu(), time.monotonic()
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(one(number)) for number in range(count)]
    seconds = time.monotonic() - started
    return [task.result() for task in tasks], seconds, witness_cpu() - cpu_before


async def curve(bench: Bench, levels: list[int], rounds: int, section: Section) -> list[Level]:
    await bench.zygote()  # started before the clock runs, as `handoff run` does before its scenarios
    measured = []
    for level in levels:
        count = rounds * max(level, 2)
        handoffs, seconds, witness_cpu = await _level(bench, level, count)
        missing = lost(bench.witness_evidence, handoffs)
        section.problems.extend(f"curve, {level} at a time: {why_lost(h)}" for h in missing)
        measured.append(Level(level, count, seconds, [h.wall_ms / 1000 for h in handoffs],
                              sum(h.cpu_s for h in handoffs) + witness_cpu, len(missing), cores()))
    section.tables.append(Table(
        headers(cores()), [level.row() for level in measured],
        caption="The curve: forked workers (as `handoff run`), one shared witness, each handoff its own home"))
    if measured:
        best = max(measured, key=lambda level: level.rate)
        rows = [level.row() for level in measured]
        section.findings.append(
            f"Throughput peaks at {best.rate:.2f} handoffs/s with {best.level} at a time ({best.row()[8]} of the CPU "
            f"bound of {best.bound:.2f}/s). Handoffs/s by level: " + ", ".join(f"{row[2]} at {row[0]}" for row in rows)
            + "; p50 latency: " + ", ".join(f"{row[3]} s at {row[0]}" for row in rows) + ".")
    return measured


async def run(bench: Bench, sizes: list[int], levels: list[int] | None = None, rounds: int = 1,
              host_levels: list[int] | None = None, warmup: bool = True) -> Section:
    """``host_levels``: the levels of the curve across simulated hosts (none: not run);
    ``warmup``: a round across the hosts before it, not counted."""
    section = Section("scale", "5. Scale: N concurrent handoffs, bounded concurrency",
                      method=__doc__.split("\n", 2)[2].strip() + "\n\n" + scale_hosts.__doc__.strip())
    peak_one, calibration = await _calibrate(bench)
    if not calibration.kept:
        section.problems.append(f"calibration handoff: {calibration.problem}")
    available = psutil.virtual_memory().available
    by_memory = int(available // max(peak_one, 1))
    bound = max(1, min(2 * cores(), by_memory))
    section.tables.append(Table(
        ["peak RSS of one worker + runtime", "available memory", "bound by memory", "bound by cores (2 × nproc)",
         "concurrency used"],
        [[f"{peak_one / MIB:.0f} MiB", f"{available / MIB:.0f} MiB", str(by_memory), str(2 * cores()), str(bound)]],
        caption="The concurrency bound"))
    per_job = capacity.bytes_per_job(scenario_files.select([]))
    section.findings.append(
        f"`handoff run` bounds its --jobs the same way, with {capacity.RUNTIME_PEAK_BYTES // MIB} MiB per worker + "
        f"runtime ({per_job // MIB} MiB per scenario slot, for the scenario that holds two runtimes): with this "
        f"memory it allows up to {capacity.jobs_that_fit(10**6, per_job, available)} scenarios at once.")
    if peak_one > capacity.RUNTIME_PEAK_BYTES:
        section.problems.append(
            f"the measured peak of one worker + runtime, {peak_one / MIB:.0f} MiB, is above the "
            f"{capacity.RUNTIME_PEAK_BYTES // MIB} MiB handoff/capacity.py assumes: raise RUNTIME_PEAK_BYTES")
    rows = []
    for count in sizes:
        handoffs, seconds, sampler = await _many(bench, count, bound)
        labels = {h.label for h in handoffs}
        witnessed = witness_saw_fact(bench.witness_evidence, labels)
        kept = [h for h in handoffs if h.kept and h.label in witnessed]
        for handoff in handoffs:
            if not handoff.kept:
                section.problems.append(f"N={count}: {handoff.problem}")
            elif handoff.label not in witnessed:
                section.problems.append(f"N={count}: {handoff.label}: the witness did not see the fact in B's request")
        rows.append([str(count), str(bound), f"{seconds:.1f}", f"{count / seconds:.2f}",
                     fmt(Summary.of(h.wall_ms for h in handoffs), digits=1, scale=0.001),
                     f"{len(kept)}/{count}", f"{sampler.peak_bytes / MIB:.0f} MiB",
                     f"{sampler.peak_runtimes}", f"{sampler.peak_processes}"])
        serial = 1000 / calibration.wall_ms if calibration.kept else None
        section.findings.append(
            f"N={count}: {count / seconds:.2f} handoffs/s with {bound} at a time"
            + (f" ({count / seconds / serial:.1f}× the {serial:.2f}/s of one handoff at a time, from the calibration run)"
               if serial else "")
            + f"; {len(kept)} of {count} kept; "
            f"peak RSS of all children {sampler.peak_bytes / MIB:.0f} MiB "
            f"({sampler.peak_bytes / MIB / max(1, sampler.peak_runtimes):.0f} MiB per live runtime).")
    if rows:
        section.tables.append(Table(
            ["N", "at once", "wall, s", "handoffs/s", "one handoff, s: median (min–max)", "kept (answer + witness)",
             "peak RSS, children", "peak live runtimes", "peak child processes"], rows,
            caption="N handoffs (2N processes), each A then B, sharing one witness"))
    local = await curve(bench, levels, rounds, section) if levels else []
    if host_levels:
        await scale_hosts.curve(bench, host_levels, rounds, section, local, warmup)
    return section
