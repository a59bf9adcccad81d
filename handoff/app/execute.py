"""Executing a plan: its scenarios run by the coordinator, the record stored, the judgement
made. `handoff run` and `handoff skew` execute plans; a lab run makes its record itself
and is kept the same way (:func:`keep`), so every command that runs something stores a
record that `handoff report` judges again exactly as it was judged then."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import psutil

from handoff import capacity, leftovers
from handoff.checker.checks import judge
from handoff.checker.verdicts import RunJudgement
from handoff.coordinator import runner
from handoff.coordinator.services import RunSettings
from handoff.runs import store as runs
from handoff.runs.record import RunRecord
from handoff.scenario import Scenario
from handoff.words import Command

Say = Callable[[str], None]  # a line for the person running the command


@dataclass(frozen=True)
class Plan:
    """What to run, and where its record goes."""

    scenarios: list[Scenario]
    settings: RunSettings
    runs_dir: Path
    command: Command = Command.RUN  # what the record is stored as
    keep_dir: Path | None = None  # --keep: the run's homes, logs and evidence are copied here


@dataclass(frozen=True)
class Executed:
    """A run that was stored and judged."""

    record: RunRecord
    judgement: RunJudgement
    stored: Path  # the stored run's directory

    def stored_as(self) -> str:
        return f"Stored as {self.record.id} ({self.stored}): `handoff report {self.record.id}` shows it again."


def execute(plan: Plan) -> Executed:
    """Run the plan's scenarios, then keep the record. Every process and temporary file
    of the run is gone when this returns or raises."""
    record = runner.run(plan.scenarios, plan.settings, plan.keep_dir, plan.command)
    return keep(record, plan.runs_dir)


def keep(record: RunRecord, runs_dir: Path) -> Executed:
    """Store a run's record, and judge it as `handoff report` judges it again."""
    stored = runs.save(record, runs_dir)
    return Executed(record, judge(record), stored)


def judged_again(reference: str | None, runs_dir: Path, command: str | None = None) -> Executed:
    """A stored run (by id, a unique part of one, or its directory; None: the latest of
    ``command``), judged again with this version's checker."""
    found = runs.load(reference, runs_dir, command=command)
    return Executed(found.record, judge(found.record), found.path)


def ready_to_run(scenarios: list[Scenario], jobs: int, note: Say) -> int:
    """Before a run: ``jobs`` lowered to what this machine's memory holds, and what
    killed runs left behind removed, each said through ``note``. Returns the jobs."""
    fitting = jobs_for_memory(jobs, scenarios, note)
    remove_leftovers(note)
    return fitting


def jobs_for_memory(requested: int, chosen: list[Scenario], note: Say) -> int:
    """``--jobs``, lowered when this machine's available memory cannot hold that many
    scenarios' runtimes at once (see capacity.py)."""
    per_job, available = capacity.bytes_per_job(chosen), psutil.virtual_memory().available
    fitting = capacity.jobs_that_fit(requested, per_job, available)
    if fitting < min(requested, len(chosen)):  # more jobs than scenarios would not run anyway
        note(capacity.lowered_note(requested, fitting, per_job, available))
    return fitting


def remove_leftovers(note: Say) -> None:
    """Remove what killed runs left behind (their owners are gone), and say so."""
    found = leftovers.find(forget_emptied=True)
    if not found:
        return
    failed = leftovers.remove(found)
    note(f"note: removed what a killed run left behind: {leftovers.describe(found)}")
    for problem in failed:
        note(f"warning: could not remove {problem}")


def after_interrupt() -> str:
    """What an interrupted run says, having checked that it is true."""
    left = leftovers.find(of=os.getpid())
    if not left:
        return "interrupted; every worker, runtime and temporary file was removed"
    return f"interrupted; could not remove {leftovers.describe(left)}: run `handoff clean`"
