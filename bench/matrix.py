"""Benchmark 4: wall time of the scenario matrix at --jobs $(nproc), how far that is from
the floor the runtimes' own CPU sets, and where the rest of its CPU time goes.

``handoff run [SCENARIOS] --jobs $(nproc)`` as a subprocess, as a user runs it, on both
paths to the model: the default (the witness as the GitHub Copilot API, the lab's path)
and ``--backend witness-byok``; with ``--matrix-serial`` also ``--jobs 1``; the settings
alternate (A, B, B, A, ...) so none always runs on a warmer or quieter machine.
A run counts only if it exits 0, i.e. every scenario came out as its file expects; the
others are listed with their exit code. Each run starts its own witness, PostgreSQL
server and simulated LAN, as a user's run does.

CPU time (user + system) is taken from the kernel's accounting of reaped children: the
whole run is this process's getrusage(RUSAGE_CHILDREN) before and after it (this process
is a child subreaper, so a daemon the run started, such as PostgreSQL, is counted too),
and each worker reports its own and its runtime's share in its ``finished`` event (the
run's ``--json``); for a worker a crash scenario kills, which reports nothing, the
coordinator notes what it and its runtime had used at the kill (``killed_cpu_s`` in the
run's record). *Everything else* is the tool's own processes (the CLI and coordinator,
the witness, the zygote, the simulated hosts' set-up and sshd, PostgreSQL, the container
engine) and a runtime orphaned by a kill of its app alone, which ends by itself. (A worker on a
simulated host counts the few `mount` commands that build its view as its runtime's.) The runtimes' share is
a floor no tool can go under: on C cores the matrix cannot finish in less than runtime
CPU / C seconds.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from pathlib import Path

from bench.machine import cores
from bench.procs import PROJECT_ROOT, Bench, handoff_command, run_record
from bench.report import Section, Table
from bench.stats import Summary, fmt

MATRIX_TIMEOUT_SECONDS = 900.0
BYOK = "witness-byok"  # the other path, run beside the default


NEW_INTERPRETER_HOSTS = ("container", "ssh")  # a worker there cannot be forked from this machine's zygote


@dataclass(frozen=True)
class CpuSplit:
    """CPU seconds of one matrix run."""

    total: float
    runtimes: float  # every worker's runtime, with the commands it ran
    workers: float  # the worker processes themselves
    lifecycles: int  # workers that reported, each with its runtime (two for a concurrent resume)
    new_interpreters: float = 0.0  # of ``workers``: those started as a new Python, which imports the SDK
    new_interpreter_count: int = 0
    killed: int = 0  # workers killed on purpose, whose CPU (and their runtimes') the kill noted

    @property
    def rest(self) -> float:
        return self.total - self.runtimes - self.workers


def started_anew(scenario, step_name: str) -> bool:
    """Whether ``handoff run`` starts this step's worker as a new interpreter rather than a
    fork of its zygote: in a container or over SSH (another machine's process), or with
    another SDK than the zygote has imported (that SDK's own virtual environment)."""
    step = next((s for s in scenario.steps if s.name == step_name), None)
    return scenario.hosts.get(step.host if step else "", "") in NEW_INTERPRETER_HOSTS or bool(step and step.sdk)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_split(total: float, results_json: Path) -> CpuSplit | None:
    """The split of ``total`` by the workers' own reports in a ``handoff run --json`` file."""
    record = run_record(results_json)
    if record is None:
        return None
    reports, killed = [], []
    for scenario in record.scenarios:
        for step in scenario.steps:
            finished = step.view().finished
            if finished is not None and finished.cpu_s is not None:
                reports.append((finished.cpu_s, started_anew(scenario.scenario, step.step)))
            elif step.killed_cpu_s is not None:  # killed before it could report: noted at the kill
                killed.append((step.killed_cpu_s, started_anew(scenario.scenario, step.step)))
    both = reports + killed
    anew = [cpu.worker for cpu, new in both if new]
    return CpuSplit(total, sum(cpu.runtime for cpu, _ in both), sum(cpu.worker for cpu, _ in both),
                    len(reports), sum(anew), len(anew), killed=len(killed))


@dataclass(frozen=True)
class Setting:
    """One way of running the matrix: this checkout or a baseline's, at some --jobs."""

    jobs: int
    baseline: Path | None = None  # another checkout, set up with `make setup`
    backend: str | None = None  # --backend, when not the default path (the Copilot API)

    @property
    def label(self) -> str:
        return (f"--jobs {self.jobs}" + (f" --backend {self.backend}" if self.backend else "")
                + (f" (baseline {self.baseline.name})" if self.baseline else ""))

    def command(self, scenarios: list[str], results_json: Path, runs_dir: Path) -> list[str]:
        if self.baseline:  # an older checkout may not know --runs-dir, nor this --json shape
            return [str(self.baseline / ".venv" / "bin" / "handoff"), "run", *scenarios, "--jobs", str(self.jobs)]
        backend = ["--backend", self.backend] if self.backend else []
        return handoff_command("run", *scenarios, "--jobs", str(self.jobs), *backend, "--json", str(results_json),
                               "--runs-dir", str(runs_dir))


async def run(bench: Bench, runs: int, scenarios: list[str], baseline: Path | None = None,
              serial: bool = False) -> Section:
    parallel = cores()
    what = "the default matrix (every scenario)" if not scenarios else "the scenarios " + ", ".join(scenarios)
    section = Section("matrix", "4. Matrix wall time at --jobs $(nproc), next to the runtimes' floor",
                      method=__doc__.split("\n", 3)[3].strip() + f"\n\nMeasured: {what}.")
    settings = [Setting(1), Setting(parallel)] if serial and parallel > 1 else [Setting(parallel)]
    settings.append(Setting(parallel, backend=BYOK))
    if baseline is not None:
        settings.append(Setting(parallel, baseline))
    walls: dict[Setting, list[float]] = {setting: [] for setting in settings}
    splits: dict[Setting, list[CpuSplit]] = {setting: [] for setting in settings}
    counted: dict[Setting, int] = {setting: 0 for setting in settings}
    summary_line = ""
    for number in range(runs):
        order = settings if number % 2 == 0 else list(reversed(settings))
        for setting in order:
            results_json = bench.new_dir("matrix") / "results.json"
            cpu_before = _children_cpu()
            # A checkout's `python -m` children import from their working directory: run each in its own.
            done = await bench.run(*setting.command(scenarios, results_json, bench.runs_dir),
                                   timeout=MATRIX_TIMEOUT_SECONDS, graceful=True, cwd=setting.baseline or PROJECT_ROOT,
                                   progress=f"{setting.label}, run {number + 1}:")
            cpu = _children_cpu() - cpu_before
            last = next((line for line in reversed(done.stdout.splitlines()) if line.strip()), "")
            if done.exit_code == 0:
                walls[setting].append(done.wall_ms)
                counted[setting] += 1
                if not setting.baseline:
                    summary_line = last
                split = cpu_split(cpu, results_json)
                if split:
                    splits[setting].append(split)
            else:
                why = "timed out" if done.timed_out else f"exit code {done.exit_code}"
                detail = last or done.stderr_tail.strip().splitlines()[-1:] or ""
                section.problems.append(f"{setting.label}, run {number + 1}: {why} ({detail}); not counted")
    rows = [[setting.label, f"{counted[setting]}/{runs}", fmt(Summary.of(walls[setting]), digits=1, scale=0.001),
             *_cpu_cells(splits[setting])]
            for setting in settings]
    section.tables.append(Table(
        ["setting", "runs counted (exit 0)", "wall time, s", "CPU, s: all", "in runtimes", "in workers",
         "everything else", "workers that reported"],
        rows, caption=f"`handoff run{''.join(' ' + name for name in scenarios)} --jobs N`: median (min–max)"))
    one, many = Summary.of(walls.get(Setting(1), [])), Summary.of(walls.get(Setting(parallel), []))
    if one and many and parallel > 1:
        section.findings.append(
            f"--jobs {parallel} finishes in {many.median / one.median:.2f}× the time of --jobs 1 "
            f"(speed-up {one.median / many.median:.2f}× on {parallel} cores; ratio of medians).")
    byok = Summary.of(walls[Setting(parallel, backend=BYOK)])
    if byok and many:
        section.findings.append(
            f"On the Copilot API's path (the default) the matrix took {many.median / 1000:.1f} s at --jobs {parallel}; "
            f"on BYOK, alternated with it in this run, {byok.median / 1000:.1f} s: **{many.median / byok.median:.2f}× "
            f"the BYOK matrix's time** (ratio of medians).")
    if baseline is not None:
        before = Summary.of(walls[settings[-1]])
        if before and many:
            section.findings.append(
                f"This checkout at --jobs {parallel}: {many.median / 1000:.1f} s; the baseline {baseline} at the same "
                f"setting, alternated with it in this run: {before.median / 1000:.1f} s "
                f"({many.median / before.median:.2f}× the baseline's time; ratio of medians).")
    every = [split for setting in settings for split in splits[setting]]
    if every and many:
        _floor_findings(section, every, many.median / 1000, parallel)
    if summary_line:
        section.findings.append(f"Last counted run said: \"{summary_line.strip()}\"")
    return section


def _floor_findings(section: Section, every: list[CpuSplit], wall_s: float, parallel: int) -> None:
    """How far the parallel run is from what the runtimes alone cost, and what the rest is."""
    def median(values) -> float:
        return Summary.of(values).median

    runtimes = median(s.runtimes for s in every)
    floor = runtimes / parallel
    section.findings.append(
        f"The runtimes alone take {runtimes:.1f} CPU-s per run ({median(s.runtimes / s.total for s in every):.0%} of "
        f"the run's CPU; {median(s.runtimes / s.lifecycles for s in every if s.lifecycles):.2f} CPU-s per worker's "
        f"runtime: started, worked, stopped; {median(s.killed for s in every):.0f} of them killed on purpose, "
        f"their CPU noted at the kill), so on {parallel} cores no run of this matrix can take less than "
        f"{floor:.1f} s however little the tool does; --jobs {parallel} took {wall_s:.1f} s, "
        f"**{wall_s / floor:.2f}× that floor**.")
    anew, count = median(s.new_interpreters for s in every), median(s.new_interpreter_count for s in every)
    forked = median(s.workers - s.new_interpreters for s in every)
    rest = median(s.rest for s in every)
    if not count:
        section.findings.append(f"Above the floor, per run (CPU-s, medians): {forked:.1f} in the workers (all forked), "
                                f"{rest:.1f} in everything else.")
        return
    corrected = (runtimes + anew) / parallel
    section.findings.append(
        f"Above the floor, per run (CPU-s, medians): {anew:.1f} in the {count:.0f} workers started as a new "
        f"interpreter (in a container, over SSH, or with another SDK: each imports the SDK, about 1 CPU-s, and the "
        f"rung needs that new process), {forked:.1f} in the forked workers, {rest:.1f} in everything else; with the "
        f"new interpreters counted as part of the floor it is {corrected:.1f} s, and the run took "
        f"{wall_s / corrected:.2f}× that.")
    busy = median(s.total for s in every) / parallel
    section.findings.append(
        f"Where the {wall_s - corrected:.1f} s above that corrected floor go: {(forked + rest) / parallel:.1f} s are "
        f"the CPU of the forked workers and everything else spread over {parallel} cores; the other "
        f"{max(0.0, wall_s - busy):.1f} s (the wall time less the run's CPU / {parallel}) are cores left idle: the "
        f"run's start before its first worker, its end after the last, and moments when neither scenario running "
        f"had work for a core.")
    # What 1.10x of the corrected floor asks, in this run's own terms: even a run whose cores
    # never idle takes its CPU / cores, so the tool's own CPU bounds the ratio by itself.
    allowed, idle_core_s = 0.10 * (runtimes + anew), parallel * max(0.0, wall_s - busy)
    section.findings.append(
        f"Even with no core ever idle this run would take its CPU / {parallel} = {busy:.1f} s, "
        f"{busy / corrected:.2f}× the corrected floor. 1.10× leaves the tool {allowed:.1f} CPU-s of its own (the forked "
        f"workers and everything else; it used {forked + rest:.1f}) if no core is ever idle; with the "
        f"{idle_core_s:.1f} core-s left idle here, {max(0.0, allowed - idle_core_s):.1f} CPU-s.")


def _cpu_cells(splits: list[CpuSplit]) -> list[str]:
    def cell(values) -> str:
        return fmt(Summary.of(values), digits=1)

    return [cell(s.total for s in splits), cell(s.runtimes for s in splits), cell(s.workers for s in splits),
            cell(s.rest for s in splits), fmt(Summary.of(s.lifecycles for s in splits))]
