"""The coordinator: runs scenarios step by step in separate worker processes.

Split by job, each a module of its own:

* services.py — what a run shares: tracker, run directory, witness, zygote, LAN, databases;
* scheduler.py — which scenario runs when (slots, longest first);
* scenario_run.py — one scenario: its hosts (placement.py), its steps, the id passed along;
* step_driver.py — one step: a worker on a host, its spec, its events, time-outs, faults;
* specs.py — what a worker is told.

:func:`run` ties them together and returns the run's record (handoff/runs/record.py):
everything observed, nothing judged. Every process, namespace and temporary file is
gone when it returns or raises.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile
import time
from pathlib import Path

from handoff.backends import preflight
from handoff.coordinator.scheduler import run_all
from handoff.coordinator.services import CoordinatorError, RunServices, RunSettings
from handoff.processes import ProcessTracker
from handoff.runs.record import (
    RunOptions,
    RunRecord,
    ScenarioRecord,
    new_run_id,
    this_machine,
)
from handoff.runtime_locator import locate_runtime
from handoff.scenario import Scenario
from handoff.stores.database import redacted

__all__ = ["CoordinatorError", "RunSettings", "run"]


def _interrupt(*_):
    raise KeyboardInterrupt


def run(scenarios: list[Scenario], settings: RunSettings, keep_dir: Path | None = None) -> RunRecord:
    """Run the scenarios and return what was observed."""
    runtime_path = locate_runtime()
    preflight(settings.backend)
    started = time.time()
    run_dir = Path(tempfile.mkdtemp(prefix="handoff-run-"))
    services = RunServices(settings, runtime_path, run_dir, ProcessTracker())
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C does
    try:
        records = asyncio.run(_run(scenarios, services))
    finally:
        services.close()
        signal.signal(signal.SIGTERM, previous)
        if keep_dir is not None:
            shutil.copytree(run_dir, keep_dir, dirs_exist_ok=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    reported = next((ready.runtime_version for scenario in records for step in scenario.steps
                     if (ready := step.view().ready) is not None), None)
    return RunRecord(new_run_id(started), "run", started, time.time(), this_machine(reported), options(settings),
                     records)


async def _run(scenarios: list[Scenario], services: RunServices) -> list[ScenarioRecord]:
    try:
        await services.start(scenarios)
        return await run_all(scenarios, services)
    finally:
        await services.tracker.shutdown()  # the witness, and any worker an interrupt cut short


def options(settings: RunSettings) -> RunOptions:
    """The settings as they are stored with the run: names of secrets, never values."""
    return RunOptions(
        fact=settings.fact.value, topic=settings.fact.topic, jobs=settings.jobs, backend=settings.backend,
        fork_workers=settings.fork_workers,
        remote_hosts={name: target.describe() for name, target in settings.remote_hosts.items()},
        store=redacted(settings.store_url),
    )

