"""``python -m bench [--quick] [--only NAMES] ...``: run the benchmarks, print their
tables, write BENCHMARKS.md.

The default (``make bench``) is the full pass, sized to take about 10 minutes on a
2-core machine (when `make runtimes` has run; sections whose versions are missing are
shorter); ``--quick`` is a smoke pass of under 2 minutes: every section once, with
one or two repeats, a smaller matrix and fewer sizes and settings, whose numbers are only
indicative (ratios from one or two pairs decide nothing). Every option below overrides one
knob of either pass. Exit code: 0 when every measured run kept the fact and exited as
expected, 1 when some did not (they are listed under "Problems"), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench import history, hosts, matrix, overhead, recovery, scale, settings, stores, versions
from bench.machine import command_line, describe, load
from bench.procs import PROJECT_ROOT, Bench
from bench.report import Section, terminal, write

BENCHMARKS = ("overhead", "history", "stores", "matrix", "scale", "hosts", "versions", "recovery", "settings")
QUICK_MATRIX = ["same-process", "cross-process", "isolated-store"]

PREAMBLE = """\
Written by `make bench` (`python -m bench`); see `bench/` for how each number is taken.
Times are wall-clock milliseconds unless a column says otherwise, given as **median
(min–max)** over the repeats; ratios are taken between runs made side by side in the same
round, then their median is given. Every benchmark drives the real Copilot runtime through
the real Python SDK against the local witness model, so no number includes a real
model's latency: they measure the runtime, the SDK and the tool. Timings depend on the
machine and on whatever else runs on it (see the load averages below); they are
measured, never asserted by the tests."""


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a faster, rougher pass (under 2 minutes)")
    parser.add_argument("--only", type=_names, default=list(BENCHMARKS),
                        help=f"comma-separated subset of: {', '.join(BENCHMARKS)}")
    parser.add_argument("--output", type=Path, default=PROJECT_ROOT / "BENCHMARKS.md")
    parser.add_argument("--pairs", type=int, help="overhead: tool/bare pairs (default 5, quick 1)")
    parser.add_argument("--history-sizes", type=_ints, help="history: turns per session (default 1,10,100,200,1000; quick 1,30)")
    parser.add_argument("--history-repeats", type=int, help="history: cold resumes per size (default 2, quick 1)")
    parser.add_argument("--history-deadline", type=float,
                        help="history: seconds the build may take before the longest session is capped (default 60, "
                             "quick 30)")
    parser.add_argument("--store-repeats", type=int, help="stores: handoffs per store (default 2, quick 1)")
    parser.add_argument("--matrix-runs", type=int, help="matrix: runs per --jobs setting (default 2, quick 1)")
    parser.add_argument("--matrix-serial", action="store_true",
                        help="matrix: also run --jobs 1, alternated with --jobs $(nproc), for the speed-up (adds about "
                             "2.5 minutes per run on 2 cores)")
    parser.add_argument("--matrix-scenarios", type=_names,
                        help="matrix: comma-separated scenarios (default: the whole default matrix; quick: 3 local ones)")
    parser.add_argument("--baseline", type=Path, metavar="DIR",
                        help="matrix: also run this checkout of an earlier version (set up with `make setup`) at "
                             "--jobs $(nproc), alternated with this one, to compare the two in one run")
    parser.add_argument("--scale-sizes", type=_ints, help="scale: concurrent handoffs (default 8; quick: none)")
    parser.add_argument("--scale-levels", type=_ints, help="scale: handoffs at a time on the curve (default 1,2,4,8; "
                                                           "quick 1,4)")
    parser.add_argument("--scale-host-levels", type=_ints,
                        help="scale: handoffs at a time on the curve across 3 simulated hosts through PostgreSQL "
                             "(default: the --scale-levels, so the two curves compare level by level; quick 4; '' leaves "
                             "it out)")
    parser.add_argument("--scale-rounds", type=int,
                        help="scale: the curve's batch per level is this × max(level, 2) handoffs (across hosts: "
                             "max(level, 3)) (default 2, quick 1)")
    parser.add_argument("--host-repeats", type=int, help="hosts: handoffs per kind of host (default 2, quick 1)")
    parser.add_argument("--version-rounds", type=int, help="versions: rounds of every case (default 2, quick 1)")
    parser.add_argument("--recovery-rounds", type=int, help="recovery: runs of the healing fault scenarios (default 2, "
                                                             "quick 1)")
    parser.add_argument("--settings-rounds", type=int,
                        help="settings: rounds, each one handoff per runtime setting (default 7, quick 1)")
    parser.add_argument("--settings", type=_names, dest="settings_names",
                        help=f"settings: which ones (default: all {len(settings.SETTINGS)}; quick: "
                             f"{', '.join(settings.QUICK)})")
    chosen = parser.parse_args(argv)
    unknown = set(chosen.only) - set(BENCHMARKS)
    if unknown:
        parser.error(f"--only: unknown benchmark {', '.join(sorted(unknown))} (choose from {', '.join(BENCHMARKS)})")
    if chosen.baseline is not None and not (chosen.baseline / ".venv" / "bin" / "handoff").is_file():
        parser.error(f"--baseline {chosen.baseline}: no .venv/bin/handoff there (run `make setup` in that checkout)")
    quick = chosen.quick

    def default(name: str, full, fast):
        if getattr(chosen, name) is None:
            setattr(chosen, name, fast if quick else full)

    default("pairs", 5, 1)
    default("history_sizes", [1, 10, 100, 200, 1000], [1, 30])
    default("history_repeats", 2, 1)
    default("history_deadline", 60.0, 30.0)
    default("store_repeats", 2, 1)
    default("matrix_runs", 2, 1)
    default("matrix_scenarios", [], QUICK_MATRIX)
    default("scale_sizes", [8], [])
    default("scale_levels", [1, 2, 4, 8], [1, 4])
    default("scale_host_levels", list(chosen.scale_levels), [4])
    default("scale_rounds", 2, 1)
    default("host_repeats", 2, 1)
    default("version_rounds", 2, 1)
    default("recovery_rounds", 2, 1)
    default("settings_rounds", 7, 1)
    default("settings_names", [s.name for s in settings.SETTINGS], list(settings.QUICK))
    unknown_settings = set(chosen.settings_names) - {s.name for s in settings.SETTINGS}
    if unknown_settings:
        parser.error(f"--settings: unknown setting {', '.join(sorted(unknown_settings))} "
                     f"(choose from {', '.join(s.name for s in settings.SETTINGS)})")
    return chosen


async def run_all(bench: Bench, chosen: argparse.Namespace, sections: list[Section]) -> None:
    current = asyncio.current_task()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, current.cancel)  # `kill` cleans up as Ctrl-C does
    plan = {
        "overhead": lambda: overhead.run(bench, chosen.pairs, warmup=not chosen.quick),
        "history": lambda: history.run(bench, chosen.history_sizes, chosen.history_repeats, chosen.history_deadline),
        "stores": lambda: stores.run(bench, chosen.store_repeats),
        "matrix": lambda: matrix.run(bench, chosen.matrix_runs, chosen.matrix_scenarios, chosen.baseline,
                                     serial=chosen.matrix_serial),
        "scale": lambda: scale.run(bench, chosen.scale_sizes, chosen.scale_levels, chosen.scale_rounds,
                                   chosen.scale_host_levels, warmup=not chosen.quick),
        "hosts": lambda: hosts.run(bench, chosen.host_repeats),
        "versions": lambda: versions.run(bench, chosen.version_rounds, warmup=not chosen.quick),
        "recovery": lambda: recovery.run(bench, chosen.recovery_rounds),
        "settings": lambda: settings.run(bench, chosen.settings_rounds, settings.named(chosen.settings_names),
                                         warmup=not chosen.quick),
    }
    try:
        for name in BENCHMARKS:
            if name not in chosen.only:
                continue
            print(f"-- running {name} ...", flush=True)
            started = time.monotonic()
            section = await plan[name]()
            section.seconds = time.monotonic() - started
            sections.append(section)
            print(terminal(section), flush=True)
    finally:
        await bench.shutdown()


def main(argv: list[str] | None = None) -> int:
    chosen = options(sys.argv[1:] if argv is None else argv)
    started_at, started, load_at_start = datetime.now(timezone.utc), time.monotonic(), load()
    bench = Bench()
    sections: list[Section] = []
    try:
        asyncio.run(run_all(bench, chosen, sections))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted: every process and temporary directory the benchmark made was removed; "
              "BENCHMARKS.md was not written", file=sys.stderr)
        return 130
    finally:
        bench.close()
    machine = describe(bench.runtime_path, command_line(), started_at, load_at_start)
    machine.append(("total time", f"{time.monotonic() - started:.0f} s"))
    write(chosen.output, machine, sections, PREAMBLE)
    print(f"wrote {chosen.output} ({time.monotonic() - started:.0f} s in all)")
    problems = [p for s in sections for p in s.problems]
    if problems:
        print(f"{len(problems)} problem(s): see 'Problems in this run' in {chosen.output.name}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
