"""``python -m bench.soak [--runs N] [--quick]`` (``make soak``): the matrix's verdicts do
not depend on the machine's load (issue 30, item 4).

The whole default matrix (``handoff run`` with no scenario named) runs several times as a
subprocess, as a user runs it, and every scenario's verdicts are compared with those of
an idle run:

* **idle**: the reference, with nothing of the soak's own running beside it. It first
  waits, up to 20 minutes, until no other run or test of this checkout (a runtime started
  from it, a container on a host's user directory, a pytest working in it) has been seen
  for 10 s; the table says how many such processes were seen during each run;
* **saturated** (``--runs``, default 5): 2 busy processes per core (``nproc``) spin
  beside the run; the soak starts them and kills them when the run ends, and each also
  ends by itself at a deadline a little past the run's time-out, so none can outlive the
  soak. The runs alternate ``--jobs`` between twice the core count (first) and the core
  count;
* **cold runtime cache**: as right after a clone. A runtime unpacks itself (about
  235 MB) into ``$XDG_CACHE_HOME/copilot/pkg/`` on its first start; every worker of
  ``handoff run`` has a user directory of its own under ``.state/hosts/<host>/``
  (XDG_CACHE_HOME is ``.cache`` there) and a runtime of another version has
  ``.state/runtime-cache/<version>/``. Neither place can be pointed elsewhere, so those
  caches are moved aside for this run (renamed into ``.state/soak/``, with a manifest,
  so a soak killed with SIGKILL is restored by the next one) and put back after it,
  whatever happens; what the run unpacked in their place is deleted (where there was no
  cache before, the run's is left, as any run leaves it). The run also gets a fresh,
  empty XDG_CACHE_HOME, so nothing can fall back on the user's own ``~/.cache``. The
  caches are moved only after the same wait as the idle run's (moving them would change
  another run, putting them back would pull them from under its runtimes); when the
  wait runs out, the cold run is left out, as a problem.

Verdicts are compared as ``handoff diff`` compares two runs (handoff/report/diff.py), on
the checker's judgement of each run's stored record (handoff/checker/checks.py): per
turn, its verdict, the evidence it rests on, whether the fact reached the model, whether
the resume followed a close, and whether it held as the scenario expects. A scenario
counts as identical when none of these differs in any of its turns. The runs are stored
in ``.state/soak/runs`` (``handoff report ID --runs-dir .state/soak/runs``), out of the
way of ``handoff runs`` and of the scheduling hints ``.state/runs`` keeps.

Exit code: 0 when every run exited 0 with every scenario's verdicts as the idle run's,
1 when one did not, 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import psutil

from bench.machine import cores, cpu_model, load
from bench.procs import CLI_GRACE_SECONDS, PROJECT_ROOT, Bench, handoff_command, run_record
from bench.report import Section, Table, markdown, replace_block, terminal
from handoff.checker.checks import judge
from handoff.checker.verdicts import RunJudgement
from handoff.hosts.base import USER_DIRS
from handoff.processes import is_runtime
from handoff.report.diff import Difference, differences
from handoff.versions import RUNTIME_CACHES

SOAK_DIR = PROJECT_ROOT / ".state" / "soak"
RUN_TIMEOUT_SECONDS = 1800.0  # the idle matrix takes 75-90 s on 2 cores; a saturated one several times that
BUSY_SLACK_SECONDS = 120.0  # a busy process ends by itself this long after its run's time-out and grace
BUSY_PER_CORE = 2
QUIET_SECONDS = 10.0  # the cold run starts once no other run has used the caches for this long
COLD_WAIT_SECONDS = 1200.0  # ... or is left out after this long
SECTION = "soak"

# A busy process: spins until its deadline (argv[1], seconds from its start), then exits.
BUSY = """\
import sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    for _ in range(200000):
        pass
"""


# -- the plan -----------------------------------------------------------------------------

IDLE, SATURATED, COLD = "idle", "saturated", "cold"


@dataclass(frozen=True)
class Planned:
    """One run of the matrix: under what load, at what --jobs."""

    name: str
    load: str  # IDLE | SATURATED | COLD
    jobs: int
    busy: int = 0  # busy processes beside it


def plan(saturated_runs: int, core_count: int, busy_per_core: int = BUSY_PER_CORE) -> list[Planned]:
    """Idle first (the reference), then the saturated runs, then the cold one. The
    saturated runs alternate --jobs between twice the cores (the first, so that even one
    saturated run goes above the core count) and the cores."""
    runs = [Planned("idle", IDLE, core_count)]
    for number in range(saturated_runs):
        jobs = 2 * core_count if number % 2 == 0 else core_count
        runs.append(Planned(f"saturated {number + 1}", SATURATED, jobs, busy_per_core * core_count))
    runs.append(Planned("cold cache", COLD, core_count))
    return runs


# -- the comparison -----------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """One run's verdicts next to the idle run's, scenario by scenario."""

    total: int  # scenarios compared: the idle run's, and any the other run has besides
    differing: dict[str, tuple[Difference, ...]]  # scenario -> what differs in it
    no_record: bool = False  # the run left no record to compare

    @property
    def same(self) -> int:
        return 0 if self.no_record else self.total - len(self.differing)

    @property
    def identical(self) -> bool:
        return not self.no_record and not self.differing

    def cell(self) -> str:
        if self.no_record:
            return f"0/{self.total} (no record)"
        return f"{self.same}/{self.total}"


def compare(reference: RunJudgement, got: RunJudgement | None) -> Comparison:
    """``got``'s turns against ``reference``'s with ``handoff diff``'s comparison, grouped
    by scenario; a scenario either run lacks differs by its missing turns."""
    names = [s.name for s in reference.scenarios]
    if got is None:
        return Comparison(len(names), {}, no_record=True)
    names += [s.name for s in got.scenarios if s.name not in names]
    grouped: dict[str, list[Difference]] = defaultdict(list)
    for difference in differences(reference, got):
        grouped[difference.key[0]].append(difference)
    return Comparison(len(names), {name: tuple(grouped[name]) for name in names if grouped[name]})


# -- one run ------------------------------------------------------------------------------


@dataclass
class Outcome:
    planned: Planned
    wall_s: float = 0.0
    exit_code: int | None = None
    timed_out: bool = False
    run_id: str | None = None
    jobs_ran: int | None = None  # --jobs as the run's record has it (handoff run may lower it for memory)
    judgement: RunJudgement | None = None
    comparison: Comparison | None = None  # None for the reference itself
    busy_cpu_s: float | None = None  # CPU the busy processes took during the run
    unpacked: int = 0  # runtime packages unpacked during the run
    unpacked_mb: float = 0.0
    load_before: float = 0.0  # 1-minute load average
    load_after: float = 0.0
    last_line: str = ""
    skipped: str = ""  # why it did not run
    others_seen: int = 0  # most processes of other runs or tests of this checkout running at once

    @property
    def load_cell(self) -> str:
        if self.planned.load == IDLE:
            return "idle" if not self.others_seen else "idle, but beside another run of this checkout"
        if self.planned.load == COLD:
            return "cold runtime cache"
        taken = ""
        if self.busy_cpu_s is not None and self.wall_s:
            taken = f" (they took {self.busy_cpu_s / self.wall_s:.1f} of {cores()} cores)"
        return f"saturated: {self.planned.busy} busy processes{taken}"

    @property
    def jobs_cell(self) -> str:
        if self.jobs_ran is not None and self.jobs_ran != self.planned.jobs:
            return f"{self.jobs_ran} (asked {self.planned.jobs})"
        return str(self.planned.jobs)

    @property
    def exit_cell(self) -> str:
        return "not run" if self.skipped else "timed out" if self.timed_out else str(self.exit_code)

    @property
    def verdicts_cell(self) -> str:
        if self.skipped:
            return "—"
        if self.comparison is None:
            return "reference" if self.judgement is not None else "reference (no record)"
        return self.comparison.cell()

    @property
    def unpacked_cell(self) -> str:
        return f"{self.unpacked} ({self.unpacked_mb:.0f} MB)" if self.unpacked else "0"

    @property
    def ok(self) -> bool:
        return not self.skipped and self.exit_code == 0 and not self.timed_out and (
            self.judgement is not None if self.comparison is None else self.comparison.identical)


RUN_HEADERS = ["run", "load", "--jobs", "wall, s", "exit code", "verdicts as the idle run's",
               "load average, 1 min: start → end", "other runs' processes seen", "runtime packages unpacked",
               "stored as"]


def runs_table(outcomes: list[Outcome]) -> Table:
    rows = [[o.planned.name, o.load_cell, o.jobs_cell, f"{o.wall_s:.0f}", o.exit_cell, o.verdicts_cell,
             "—" if o.skipped else f"{o.load_before:.2f} → {o.load_after:.2f}", str(o.others_seen), o.unpacked_cell,
             o.run_id or "—"]
            for o in outcomes]
    return Table(RUN_HEADERS, rows, caption="Each run of the matrix, in the order they ran")


DIFFERENCE_HEADERS = ["run", "scenario", "step", "turn", "what", "idle run", "this run"]


def differences_table(outcomes: list[Outcome]) -> Table | None:
    """Every turn that came out otherwise than in the idle run; None when none did."""
    rows = []
    for outcome in outcomes:
        if outcome.comparison is None:
            continue
        for scenario, found in outcome.comparison.differing.items():
            for d in found:
                rows.append([outcome.planned.name, scenario, d.key[1], f"{d.key[2]} {d.key[3]}", d.field, d.before,
                             d.after])
    if not rows:
        return None
    return Table(DIFFERENCE_HEADERS, rows, caption="What differed from the idle run (as `handoff diff` shows it)")


def findings(outcomes: list[Outcome]) -> tuple[list[str], list[str]]:
    """What the runs say, and what went wrong in them."""
    said, problems = [], []
    reference = outcomes[0] if outcomes else None
    compared = [o for o in outcomes if o.comparison is not None]
    for outcome in outcomes:
        if outcome.skipped:
            problems.append(f"{outcome.planned.name}: {outcome.skipped}")
            continue
        if outcome.timed_out:
            problems.append(f"{outcome.planned.name}: timed out after {RUN_TIMEOUT_SECONDS:.0f} s")
        elif outcome.exit_code != 0:
            problems.append(f"{outcome.planned.name}: exit code {outcome.exit_code}"
                            + (f" ({outcome.last_line})" if outcome.last_line else ""))
        if outcome.comparison is not None and not outcome.comparison.identical:
            what = ("left no record" if outcome.comparison.no_record else
                    "differs from the idle run in " + ", ".join(outcome.comparison.differing))
            problems.append(f"{outcome.planned.name} ({outcome.run_id or 'not stored'}): {what}")
    if reference is not None and reference.judgement is None:
        problems.append("the idle run left no record: nothing could be compared")
    if compared and all(o.comparison.identical for o in compared):
        total = compared[0].comparison.total
        said.append(f"Every scenario's verdicts were the idle run's in every run under load: {total}/{total} in "
                    f"each of {len(compared)} run(s).")
    idle_wall = reference.wall_s if reference else 0.0
    for outcome in compared:
        if outcome.planned.load == SATURATED and idle_wall:
            said.append(f"{outcome.planned.name} (--jobs {outcome.jobs_cell}) took {outcome.wall_s / idle_wall:.1f}× "
                        f"the idle run's wall time.")
    if reference is not None and reference.unpacked:
        said.append(f"The idle run unpacked {reference.unpacked} runtime package(s) itself: some of its caches were "
                    f"cold (a first run on this machine), so it was not wholly a warm run.")
    beside = [o.planned.name for o in outcomes if o.others_seen]
    if beside:
        said.append(f"Another run or test of this checkout was running during: {', '.join(beside)} (its load came on "
                    f"top of the soak's own; it used the same runtime caches).")
    cold = next((o for o in outcomes if o.planned.load == COLD), None)
    if cold is not None and not cold.skipped and cold.exit_code is not None and not cold.unpacked:
        problems.append("the cold run unpacked no runtime package: its caches were not cold")
    return said, problems


# -- the runtime caches -------------------------------------------------------------------


def runtime_caches() -> list[Path]:
    """Every XDG_CACHE_HOME a worker of ``handoff run`` may unpack a runtime into: each
    host's user directory's ``.cache`` (handoff/hosts/) and each other version's cache
    (handoff/versions.py)."""
    return sorted([*(p for p in USER_DIRS.glob("*/.cache") if p.is_dir()),
                   *(p for p in RUNTIME_CACHES.glob("*") if p.is_dir())])


def unpacked_packages() -> set[Path]:
    """The runtime packages unpacked in those caches: ``copilot/pkg/<platform>/<version>``."""
    return {p for cache in runtime_caches() for p in cache.glob("copilot/pkg/*/*") if p.is_dir()}


def megabytes(paths: set[Path]) -> float:
    total = 0
    for path in paths:
        for parent, _, files in os.walk(path):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(parent, name)).st_size
    return total / 2**20


MANIFEST = "manifest.json"


class ColdCaches:
    """The runtime caches moved aside for one run, and put back after it. Renames only,
    within .state: nothing of the user's is copied or deleted, only what the run itself
    unpacked. A manifest is written before anything moves, so :func:`restore_leftovers`
    can put back what a soak killed with SIGKILL left aside."""

    def __init__(self, root: Path = SOAK_DIR, caches: list[Path] | None = None):
        self.stash = root / f"stash-{os.getpid()}"
        self.caches = runtime_caches() if caches is None else caches

    def __enter__(self) -> "ColdCaches":
        self.stash.mkdir(parents=True)
        moves = [[str(cache), str(self.stash / str(number))] for number, cache in enumerate(self.caches)]
        (self.stash / MANIFEST).write_text(json.dumps(moves))
        try:
            for cache, aside in moves:
                os.rename(cache, aside)
        except BaseException:
            restore(self.stash)
            raise
        return self

    def __exit__(self, *_) -> None:
        restore(self.stash)


def restore(stash: Path) -> None:
    """Put back what ``stash`` holds where its manifest says it came from; a cache the run
    made in its place goes (renamed away first, so the original is back at once)."""
    moves = json.loads((stash / MANIFEST).read_text())
    for number, (cache, aside) in enumerate(moves):
        if not os.path.exists(aside):
            continue
        if os.path.exists(cache):
            os.rename(cache, stash / f"made-by-the-run-{number}")
        os.rename(aside, cache)
    shutil.rmtree(stash)


def restore_leftovers(root: Path = SOAK_DIR) -> list[Path]:
    """Restore the caches of a soak that was killed during its cold run."""
    restored = []
    for stash in sorted(root.glob("stash-*")):
        pid = stash.name.removeprefix("stash-")
        if not (stash / MANIFEST).is_file() or (pid.isdigit() and psutil.pid_exists(int(pid))):
            continue
        restore(stash)
        restored.append(stash)
    return restored


def others_using_caches() -> list[str]:
    """Processes of another run or test of this checkout that may be using its runtime
    caches now or in a moment: a runtime started from this checkout, a container given a
    host's user directory, or a test run (pytest) working in this checkout, which starts
    runtimes between its tests. Not this soak's own (between its runs it has none)."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        command = process.info["cmdline"] or []
        if process.pid == os.getpid() or not command:
            continue
        text = " ".join(command)
        testing = any(Path(arg).name == "pytest" for arg in command[:2]) and _cwd(process) == PROJECT_ROOT
        candidate = testing or (is_runtime(process) and command[0].startswith(str(PROJECT_ROOT))) or \
            f"{USER_DIRS}/" in text
        if candidate and not _mine(process):
            found.append(f"{process.pid} {text[:100]}")
    return found


def _mine(process: psutil.Process) -> bool:
    """Whether the process descends from this one (or has ended). Asked of the process
    itself when it is found: a list of this process's children taken before the look
    missed whatever a run started in between, and counted this soak's own runtimes as
    another run's under load, when the look takes longest."""
    try:
        return any(parent.pid == os.getpid() for parent in process.parents())
    except psutil.Error:
        return True


def _cwd(process: psutil.Process) -> Path | None:
    try:
        return Path(process.cwd())
    except psutil.Error:
        return None


async def caches_free(quiet: float = QUIET_SECONDS, limit: float = COLD_WAIT_SECONDS) -> list[str]:
    """Wait until nothing else has used the runtime caches for ``quiet`` seconds: moving
    them aside under another run (`make test` in the same checkout) would change that run,
    and putting them back would pull a cache from under its runtimes. What still used them
    after ``limit`` seconds ([] when they came free)."""
    started = last_seen = time.monotonic()
    said = False
    while True:
        now = time.monotonic()
        users = others_using_caches()
        if users:
            last_seen = now
            if not said:
                print(f"   waiting for another run or test of this checkout to stop using the runtime caches "
                      f"(up to {limit / 60:.0f} min): {users[0]}", flush=True)
                said = True
        elif now - last_seen >= quiet:
            return []
        if now - started >= limit:
            return users
        await asyncio.sleep(0.5)


# -- running it ---------------------------------------------------------------------------


async def start_busy(bench: Bench, count: int, seconds: float) -> list[asyncio.subprocess.Process]:
    """``count`` spinning processes, each ending by itself after ``seconds`` (and, spawned
    by the tracker, killed with the soak if it dies)."""
    return [await bench.tracker.spawn(sys.executable, "-c", BUSY, f"{seconds:.0f}",
                                      stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL)
            for _ in range(count)]


async def stop_busy(bench: Bench, busy: list[asyncio.subprocess.Process]) -> float:
    """Kill them; the CPU seconds they had taken."""
    used = 0.0
    for process in busy:
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(process.pid).cpu_times()
            used += times.user + times.system
        bench.tracker.kill_tree(process.pid)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), 10)
        bench.tracker.forget(process.pid)
    return used


async def watch_others(seen: list[int], interval: float = 2.0) -> None:
    """Until cancelled: the most processes of other runs or tests of this checkout seen at
    once (``seen[0]``), so that a run beside one says so."""
    while True:
        seen[0] = max(seen[0], len(await asyncio.to_thread(others_using_caches)))
        await asyncio.sleep(interval)


async def one_run(bench: Bench, planned: Planned, scenarios: list[str], runs_dir: Path) -> Outcome:
    outcome = Outcome(planned)
    if planned.load in (IDLE, COLD):  # the reference beside nothing else, if it can be; the cold run must be
        users = await caches_free()
        if users and planned.load == COLD:
            outcome.skipped = (f"not run: another run or test of this checkout was still using the runtime caches "
                               f"after {COLD_WAIT_SECONDS / 60:.0f} min ({users[0]})")
            return outcome
    outcome.load_before = os.getloadavg()[0]
    results = bench.new_dir("soak") / "results.json"
    command = handoff_command("run", *scenarios, "--jobs", str(planned.jobs), "--json", str(results),
                              "--runs-dir", str(runs_dir))
    env = None
    seen = [0]
    watcher = asyncio.get_running_loop().create_task(watch_others(seen))
    try:
        with ColdCaches() if planned.load == COLD else contextlib.nullcontext():
            if planned.load == COLD:
                env = {**os.environ, "XDG_CACHE_HOME": str(bench.new_dir("xdg-cache"))}
            before = unpacked_packages()
            busy = []
            try:
                if planned.busy:
                    busy = await start_busy(bench, planned.busy,
                                            RUN_TIMEOUT_SECONDS + CLI_GRACE_SECONDS + BUSY_SLACK_SECONDS)
                done = await bench.run(*command, timeout=RUN_TIMEOUT_SECONDS, graceful=True, env=env,
                                       progress=f"{planned.name}:")
            finally:
                if busy:
                    outcome.busy_cpu_s = await stop_busy(bench, busy)
            new = unpacked_packages() - before
            outcome.unpacked, outcome.unpacked_mb = len(new), megabytes(new)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    outcome.others_seen = seen[0]
    outcome.load_after = os.getloadavg()[0]
    outcome.wall_s, outcome.exit_code, outcome.timed_out = done.wall_ms / 1000, done.exit_code, done.timed_out
    outcome.last_line = next((line.strip() for line in reversed(done.stdout.splitlines()) if line.strip()), "")
    record = run_record(results)
    if record is not None:
        outcome.run_id, outcome.jobs_ran, outcome.judgement = record.id, record.options.jobs, judge(record)
    return outcome


async def soak(bench: Bench, planned: list[Planned], scenarios: list[str], runs_dir: Path,
               outcomes: list[Outcome]) -> None:
    current = asyncio.current_task()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, current.cancel)  # `kill` cleans up as Ctrl-C does
    try:
        for run in planned:
            print(f"-- {run.name}: handoff run --jobs {run.jobs}"
                  + (f", beside {run.busy} busy processes" if run.busy else "")
                  + (", from empty runtime caches" if run.load == COLD else "") + " ...", flush=True)
            outcome = await one_run(bench, run, scenarios, runs_dir)
            if outcomes and outcomes[0].judgement is not None and not outcome.skipped:
                outcome.comparison = compare(outcomes[0].judgement, outcome.judgement)
            outcomes.append(outcome)
            if outcome.skipped:
                print(f"   {run.name}: {outcome.skipped}", flush=True)
                continue
            print(f"   {run.name}: exit code {outcome.exit_cell}, {outcome.wall_s:.0f} s, verdicts as the idle run's: "
                  f"{outcome.verdicts_cell}, stored as {outcome.run_id or '—'}", flush=True)
    finally:
        await bench.shutdown()


# -- the report ---------------------------------------------------------------------------


def command_line() -> str:
    """The command as run; `make soak` sets MAKELEVEL for the commands it starts."""
    python = Path(sys.executable)
    python_text = str(python.relative_to(Path.cwd())) if python.is_relative_to(Path.cwd()) else str(python)
    command = shlex.join([python_text, "-m", "bench.soak", *sys.argv[1:]])
    if os.environ.get("MAKELEVEL"):
        arguments = os.environ.get("SOAK_ARGS", "")
        return f"make soak{' SOAK_ARGS=' + shlex.quote(arguments) if arguments else ''}` → `{command}"
    return command


def section(outcomes: list[Outcome], scenarios: list[str], started_at: datetime, load_at_start: str,
            seconds: float, runs_dir: Path) -> Section:
    what = "the default matrix (`handoff run`, every scenario)" if not scenarios else \
        "only the scenarios " + ", ".join(scenarios) + " (not the whole matrix)"
    machine = [
        ["date (UTC)", started_at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")],
        ["command", f"`{command_line()}`"],
        ["cores (`nproc`)", str(cores())],
        ["CPU model", cpu_model()],
        ["load average at start", load_at_start],
        ["load average at end", load()],
        ["matrix", what],
        ["runs stored in", f"`{runs_dir.relative_to(PROJECT_ROOT) if runs_dir.is_relative_to(PROJECT_ROOT) else runs_dir}`"],
    ]
    result = Section(SECTION, "Soak: the matrix's verdicts under load (`make soak`)",
                     method=__doc__.split("\n\n", 1)[1].rsplit("\n\nExit code", 1)[0].strip(), seconds=seconds)
    result.tables.append(Table(["", ""], machine, caption="Machine and run"))
    result.tables.append(runs_table(outcomes))
    differing = differences_table(outcomes)
    if differing is not None:
        result.tables.append(differing)
    result.findings, result.problems = findings(outcomes)
    return result


def write_section(path: Path, content: Section) -> None:
    """The soak's section of BENCHMARKS.md, between its markers, the rest left as it is
    (``make bench`` carries it over when it rewrites the file: bench/report.py)."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    temporary = path.with_name(path.name + ".partial")
    temporary.write_text(replace_block(text, SECTION, markdown(content)), encoding="utf-8")
    temporary.replace(path)


# -- the command --------------------------------------------------------------------------


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, help="saturated runs (default 5; --quick 1)")
    parser.add_argument("--quick", action="store_true",
                        help="a quick look: the idle run, one saturated run (--jobs 2×nproc) and the cold run")
    parser.add_argument("--busy-per-core", type=int, default=BUSY_PER_CORE,
                        help=f"busy processes per core in a saturated run (default {BUSY_PER_CORE}, at least 2)")
    parser.add_argument("--scenarios", type=_names, default=[],
                        help="comma-separated scenarios instead of the default matrix (for trying the soak out)")
    parser.add_argument("--output", type=Path, default=PROJECT_ROOT / "BENCHMARKS.md")
    parser.add_argument("--runs-dir", type=Path, default=SOAK_DIR / "runs")
    chosen = parser.parse_args(argv)
    if chosen.runs is None:
        chosen.runs = 1 if chosen.quick else 5
    if chosen.runs < 1:
        parser.error("--runs: at least 1")
    if chosen.busy_per_core < 2:
        parser.error("--busy-per-core: at least 2")
    return chosen


def main(argv: list[str] | None = None) -> int:
    chosen = options(sys.argv[1:] if argv is None else argv)
    for stash in restore_leftovers():
        print(f"restored the runtime caches an interrupted soak had moved aside ({stash})", file=sys.stderr)
    chosen.runs_dir = chosen.runs_dir.resolve()
    chosen.runs_dir.mkdir(parents=True, exist_ok=True)
    started_at, started, load_at_start = datetime.now(timezone.utc), time.monotonic(), load()
    planned = plan(chosen.runs, cores(), chosen.busy_per_core)
    bench = Bench()
    outcomes: list[Outcome] = []
    try:
        asyncio.run(soak(bench, planned, chosen.scenarios, chosen.runs_dir, outcomes))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted: every process the soak started was stopped and the runtime caches put back; "
              f"{chosen.output.name} was not written", file=sys.stderr)
        return 130
    finally:
        bench.close()
    content = section(outcomes, chosen.scenarios, started_at, load_at_start, time.monotonic() - started,
                      chosen.runs_dir)
    print(terminal(content), flush=True)
    write_section(chosen.output, content)
    print(f"wrote the soak section of {chosen.output} ({content.seconds:.0f} s in all)")
    if content.problems or not all(o.ok for o in outcomes):
        print(f"{len(content.problems)} problem(s): see the soak section of {chosen.output.name}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
