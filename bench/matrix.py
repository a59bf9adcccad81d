"""Benchmark 4: wall time of the scenario matrix, one scenario at a time vs in parallel.

``handoff run [SCENARIOS] --jobs 1`` and ``--jobs $(nproc)`` as subprocesses, alternating
(1, N, N, 1, 1, N, ...) so neither setting always runs on a warmer or quieter machine.
A run counts only if it exits 0, i.e. every scenario came out as its file expects; the
others are listed with their exit code. Each run starts its own witness, PostgreSQL
server and simulated LAN, as a user's run does.
"""

from __future__ import annotations

from bench.machine import cores
from bench.procs import Bench, handoff_command
from bench.report import Section, Table
from bench.stats import Summary, fmt

MATRIX_TIMEOUT_SECONDS = 900.0


async def run(bench: Bench, runs: int, scenarios: list[str]) -> Section:
    parallel = cores()
    what = "the default matrix (every scenario)" if not scenarios else "the scenarios " + ", ".join(scenarios)
    section = Section("matrix", "4. Matrix wall time: --jobs 1 vs --jobs $(nproc)",
                      method=__doc__.split("\n", 2)[2].strip() + f"\n\nMeasured: {what}.")
    settings = [1, parallel] if parallel > 1 else [1]
    walls: dict[int, list[float]] = {jobs: [] for jobs in settings}
    counted: dict[int, int] = {jobs: 0 for jobs in settings}
    summary_line = ""
    for number in range(runs):
        order = settings if number % 2 == 0 else list(reversed(settings))
        for jobs in order:
            done = await bench.run(*handoff_command("run", *scenarios, "--jobs", str(jobs)),
                                   timeout=MATRIX_TIMEOUT_SECONDS, graceful=True)
            last = next((line for line in reversed(done.stdout.splitlines()) if line.strip()), "")
            if done.exit_code == 0:
                walls[jobs].append(done.wall_ms)
                counted[jobs] += 1
                summary_line = last
            else:
                why = "timed out" if done.timed_out else f"exit code {done.exit_code}"
                detail = last or done.stderr_tail.strip().splitlines()[-1:] or ""
                section.problems.append(f"--jobs {jobs}, run {number + 1}: {why} ({detail}); not counted")
    rows = [[f"--jobs {jobs}", f"{counted[jobs]}/{runs}", fmt(Summary.of(walls[jobs]), digits=1, scale=0.001)]
            for jobs in settings]
    section.tables.append(Table(["setting", "runs counted (exit 0)", "wall time, s: median (min–max)"], rows,
                                caption=f"`handoff run{''.join(' ' + name for name in scenarios)} --jobs N`"))
    one, many = Summary.of(walls[1]), Summary.of(walls.get(parallel, []))
    if one and many and parallel > 1:
        section.findings.append(
            f"--jobs {parallel} finishes in {many.median / one.median:.2f}× the time of --jobs 1 "
            f"(speed-up {one.median / many.median:.2f}× on {parallel} cores; ratio of medians).")
    if summary_line:
        section.findings.append(f"Last counted run said: \"{summary_line.strip()}\"")
    return section
