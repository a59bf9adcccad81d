"""Benchmark 8: recovery time per fault kind — from a fault's heal to the next resume
that succeeded.

``handoff run`` of the fault scenarios whose faults heal (the database stopped and
started again, a host cut off and reconnected, a full disk freed), as subprocesses, one
round after another. The time is taken by the checker from the stored run: the fault's
``healed_at`` (coordinator clock) to the ``action`` event of the next successful
``resume`` (the worker's clock; same machine). It includes starting the next step's
worker and runtime, which is what an app that retries with a new process waits for; a
run counts only if it exits 0 (every verdict as its file expects).
"""

from __future__ import annotations

from collections import defaultdict

from handoff import scenario_files
from handoff.checker.checks import judge
from handoff.faults.kinds import KINDS

from bench.procs import Bench, handoff_command, run_record
from bench.report import Section, Table
from bench.stats import Summary, fmt

RUN_TIMEOUT_SECONDS = 600.0


def healing_scenarios() -> list[str]:
    """The fault scenarios with at least one fault that heals."""
    return [s.name for s in scenario_files.tagged("faults")
            if any(KINDS[plan.kind].heals for step in s.steps for plan in step.faults)]


async def run(bench: Bench, rounds: int) -> Section:
    names = healing_scenarios()
    section = Section("recovery", "8. Recovery time per fault kind: heal → next successful resume",
                      method=__doc__.split("\n", 2)[2].strip() + f"\n\nMeasured: {', '.join(names)}; {rounds} round(s).")
    seconds: dict[tuple[str, str], list[float]] = defaultdict(list)
    never: dict[tuple[str, str], int] = defaultdict(int)
    for number in range(rounds):
        results_json = bench.new_dir("recovery") / "results.json"
        done = await bench.run(*handoff_command("run", *names, "--json", str(results_json), "--runs-dir",
                                                str(bench.runs_dir)), timeout=RUN_TIMEOUT_SECONDS, graceful=True)
        record = run_record(results_json)
        if done.exit_code != 0 or record is None:
            why = "timed out" if done.timed_out else f"exit code {done.exit_code}"
            section.problems.append(f"round {number + 1}: {why}; not counted")
            continue
        for judged in judge(record).scenarios:
            for recovery in judged.recoveries:
                key = (recovery.kind, judged.name)
                if recovery.seconds is None:
                    never[key] += 1
                else:
                    seconds[key].append(recovery.seconds)
    rows = [[kind, name, str(len(seconds[(kind, name)])), fmt(Summary.of(seconds[(kind, name)]), digits=2),
             str(never[(kind, name)])]
            for kind, name in sorted(set(seconds) | set(never))]
    section.tables.append(Table(["fault", "scenario", "recoveries", "seconds: median (min–max)",
                                 "heals with no later resume"], rows))
    return section
