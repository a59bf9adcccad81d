"""The coordinator: runs scenarios step by step in separate worker processes.

For one scenario it (1) prepares the homes the steps name, (2) starts each step's worker
as a new OS process with its own runtime, feeding it a WorkerSpec on stdin, (3) passes
the session id from step to step, as an app would pass it from one device to the next,
(4) kills a worker on purpose when the step asks to simulate a crash, and (5) collects the
witness model's records of what each turn sent. Independent scenarios run in parallel,
at most ``jobs`` at a time; every process is tracked and none outlives the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote as url_quote

from handoff.fact import Fact
from handoff.processes import ProcessTracker
from handoff.results import ScenarioResult, StepResult
from handoff.scenario import Scenario, Step
from handoff.witness.server import FACT_HEADER, MODEL_NAME, TAG_HEADERS, read_evidence
from handoff.worker.spec import TURN_ACTIONS, WorkerSpec

WITNESS_START_TIMEOUT = 15.0
# Credentials the witness runs never need; kept out of the runtime's environment.
SCRUBBED_ENV = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_HOME")


class CoordinatorError(Exception):
    """Something the tool itself could not do (exit code 3)."""


@dataclass(frozen=True)
class RunOptions:
    fact: Fact
    jobs: int
    runtime_path: Path
    run_dir: Path
    step_timeout: float = 120.0


def new_session_id() -> str:
    """A random id in the lab's shape: a readable prefix and random hex, 24 characters."""
    return f"handoff-{uuid.uuid4().hex}"[:24]


class Coordinator:
    def __init__(self, options: RunOptions, tracker: ProcessTracker):
        self.options = options
        self.tracker = tracker
        self.evidence_path = options.run_dir / "witness-evidence.jsonl"
        self.witness_url = ""

    async def run(self, scenarios: list[Scenario]) -> list[ScenarioResult]:
        try:
            await self._start_witness()
            limit = asyncio.Semaphore(max(1, self.options.jobs))

            async def bounded(scenario: Scenario) -> ScenarioResult:
                async with limit:
                    return await self.run_scenario(scenario)

            return list(await asyncio.gather(*(bounded(s) for s in scenarios)))
        finally:
            await self.tracker.shutdown()  # the witness, and any worker an interrupt cut short

    async def _start_witness(self) -> None:
        process = await self.tracker.spawn(
            sys.executable, "-m", "handoff.witness", "--port", "0", "--evidence", str(self.evidence_path),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        try:
            line = (await asyncio.wait_for(process.stdout.readline(), WITNESS_START_TIMEOUT)).decode().strip()
        except asyncio.TimeoutError:
            line = ""
        if not line.startswith("Listening: http://"):
            self.tracker.kill_tree(process.pid)
            error = (await process.stderr.read()).decode().strip()
            raise CoordinatorError(f"the witness model did not start (said {line or error or 'nothing'!r})")
        self.witness_url = line.removeprefix("Listening: ")

    async def run_scenario(self, scenario: Scenario) -> ScenarioResult:
        started = time.monotonic()
        fact = self.options.fact
        result = ScenarioResult(scenario.name, scenario.title, scenario.proves, scenario.does_not_prove, fact.value)
        workdir = self.options.run_dir / scenario.name
        (workdir / "cwd").mkdir(parents=True, exist_ok=True)
        session_id = scenario.session_id or new_session_id()
        turn = 1
        for step in scenario.steps:
            step_id = session_id if step.session == "passed" else new_session_id()
            home = workdir / ("home-shared" if step.home == "shared" else f"home-{step.name}")
            home.mkdir(exist_ok=True)
            spec = self._spec(scenario, step, home, step_id, turn, fact)
            outcome = await self._run_step(spec, step, workdir)
            result.steps.append(outcome)
            if step.session == "passed" and outcome.reported_session_id:
                session_id = outcome.reported_session_id
            turn += sum(1 for action in step.actions if action in TURN_ACTIONS)
        result.evidence = [e for e in read_evidence(self.evidence_path) if e.scenario == scenario.name]
        result.seconds = time.monotonic() - started
        return result

    def _spec(self, scenario: Scenario, step: Step, home: Path, session_id: str, turn: int, fact: Fact) -> WorkerSpec:
        tags = {
            TAG_HEADERS["scenario"]: scenario.name,
            TAG_HEADERS["step"]: step.name,
            TAG_HEADERS["host"]: "local",
            FACT_HEADER: url_quote(fact.stated_text),
        }
        return WorkerSpec(
            scenario=scenario.name, step=step.name, host="local",
            runtime_path=str(self.options.runtime_path), home=str(home),
            witness_url=self.witness_url, model=MODEL_NAME,
            fact_value=fact.value, fact_topic=fact.topic,
            actions=step.actions, session_id=session_id, first_turn=turn, tags=tags,
        )

    async def _run_step(self, spec: WorkerSpec, step: Step, workdir: Path) -> StepResult:
        outcome = StepResult(spec.scenario, spec.step, spec.host, step.home, spec.session_id)
        stderr_path = workdir / f"worker-{step.name}.stderr"
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
        with stderr_path.open("wb") as stderr:
            process = await self.tracker.spawn(
                sys.executable, "-m", "handoff.worker",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
                cwd=workdir / "cwd", env=env,
            )
            process.stdin.write(spec.to_json().encode())
            await process.stdin.drain()
            process.stdin.close()
            try:
                await asyncio.wait_for(self._read_events(process, outcome), self.options.step_timeout)
            except asyncio.TimeoutError:
                outcome.timed_out = True
            self.tracker.kill_tree(process.pid)  # a finished worker is gone already; this is cheap
            outcome.exit_code = await process.wait()
            self.tracker.forget(process.pid)
        outcome.stderr_tail = stderr_path.read_text(errors="replace")[-2000:]
        return outcome

    async def _read_events(self, process: asyncio.subprocess.Process, outcome: StepResult) -> None:
        async for raw in process.stdout:
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                continue  # the worker keeps stdout clean; anything else is not evidence
            outcome.events.append(event)
            if event.get("event") == "holding":
                # The scenario simulates a crash: SIGKILL the worker and its runtime now,
                # right after the turn answered, with no close and no clean shutdown.
                self.tracker.kill_tree(process.pid)
                outcome.killed_on_purpose = True
