"""One `handoff run`: set up, run the coordinator, clean up whatever happens, judge."""

from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

from handoff.checks import Row, rows_for
from handoff.coordinator import Coordinator, RunOptions
from handoff.fact import Fact
from handoff.processes import ProcessTracker
from handoff.results import ScenarioResult
from handoff.runtime_locator import locate_runtime
from handoff.scenario import Scenario


@dataclass
class RunOutcome:
    results: list[ScenarioResult]
    rows: list[Row]

    @property
    def all_as_expected(self) -> bool:
        return all(row.match is not False for row in self.rows) and bool(self.rows)


def _interrupt(*_):
    raise KeyboardInterrupt


def run(scenarios: list[Scenario], fact: Fact, jobs: int, keep_dir: Path | None = None) -> RunOutcome:
    """Run the scenarios; every process and temporary file is gone when this returns or raises."""
    runtime_path = locate_runtime()
    run_dir = Path(tempfile.mkdtemp(prefix="handoff-run-"))
    tracker = ProcessTracker()
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C does
    try:
        options = RunOptions(fact=fact, jobs=jobs, runtime_path=runtime_path, run_dir=run_dir)
        results = asyncio.run(Coordinator(options, tracker).run(scenarios))
    finally:
        tracker.stop_all()
        signal.signal(signal.SIGTERM, previous)
        if keep_dir is not None:
            shutil.copytree(run_dir, keep_dir, dirs_exist_ok=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    by_name = {s.name: s for s in scenarios}
    rows = [row for result in results for row in rows_for(by_name[result.name], result, fact)]
    return RunOutcome(results, rows)
