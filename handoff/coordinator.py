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
import contextlib
import json
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote as url_quote, urlsplit

from handoff import runtime_markers
from handoff.backends import COPILOT, OPENAI_COMPATIBLE, WITNESS, WITNESS_MODEL, Backend
from handoff.fact import Fact
from handoff.hosts import Host, Lan, LocalHost, NamespaceHost, NamespaceSshHost, SshHost, SshTarget, missing_capability
from handoff.processes import ProcessTracker
from handoff.results import ScenarioResult, StepResult
from handoff.scenario import LOCAL, Scenario, Step
from handoff.slots import Slots
from handoff.stores import prepare_home, tamper_with_fact
from handoff.stores.database import sqlite_url
from handoff.stores.shared import RunDatabases
from handoff.witness.launch import WitnessStartError, start_witness
from handoff.witness.server import read_evidence
from handoff.witness.tags import FACT_HEADER, TAG_HEADERS
from handoff.worker.spec import TURNS_PER_ACTION, WorkerSpec
from handoff.worker.zygote import Zygote

RUNTIME_EXIT_TIMEOUT = 10.0  # how long an orphaned runtime may take to end by itself
WORKER_EXIT_GRACE_SECONDS = 5.0  # from a worker's last output to its exit, which normally takes milliseconds


class CoordinatorError(Exception):
    """Something the tool itself could not do (exit code 3)."""


@dataclass(frozen=True)
class RunOptions:
    fact: Fact
    jobs: int
    runtime_path: Path
    run_dir: Path
    step_timeout: float = 120.0
    lan: Lan | None = None  # the simulated LAN, when the run has namespace or ssh hosts
    lan_problem: str | None = None  # why there is no LAN although a scenario needs one
    remote_hosts: dict[str, SshTarget] = field(default_factory=dict)  # --host NAME=ssh://...
    databases: RunDatabases | None = None  # where scenarios with a database store keep sessions
    backend: Backend = Backend(WITNESS, WITNESS_MODEL)  # where the model comes from (handoff.backends)
    fork_workers: bool = True  # local workers are forked from a zygote that has the SDK imported


def new_session_id() -> str:
    """A random id in the lab's shape: a readable prefix and random hex, 24 characters."""
    return f"handoff-{uuid.uuid4().hex}"[:24]


def _expected_cost(scenario: Scenario) -> float:
    """A rough length in seconds, for scheduling only: about a second per step (a worker
    and its runtime), more on a simulated host, plus the step's waits."""
    return sum(1.0 + step.wait + (0.5 if step.host != LOCAL else 0.0) for step in scenario.steps)


class Coordinator:
    def __init__(self, options: RunOptions, tracker: ProcessTracker):
        self.options = options
        self.tracker = tracker
        self.evidence_path = options.run_dir / "witness-evidence.jsonl"
        self.witness_url = ""
        self.zygote: Zygote | None = None
        self._slots = Slots(options.jobs)  # scenarios running at once

    async def run(self, scenarios: list[Scenario]) -> list[ScenarioResult]:
        try:
            # Both take a moment and neither needs the other: start them side by side.
            await asyncio.gather(self._start_witness(), self._start_zygote())

            async def bounded(scenario: Scenario) -> ScenarioResult:
                await self._slots.take()
                try:
                    return await self.run_scenario(scenario)
                finally:
                    await self._slots.give_back()

            try:
                # A TaskGroup, unlike gather, cancels the other scenarios when one fails.
                # Longest first, so that no long scenario starts last and runs alone; the
                # results still come back in ladder order.
                async with asyncio.TaskGroup() as group:
                    longest_first = sorted(range(len(scenarios)), key=lambda i: _expected_cost(scenarios[i]), reverse=True)
                    tasks = {i: group.create_task(bounded(scenarios[i])) for i in longest_first}
            except BaseExceptionGroup as failures:
                raise failures.exceptions[0] from None
            return [tasks[i].result() for i in range(len(scenarios))]
        finally:
            await self.tracker.shutdown()  # the witness, and any worker an interrupt cut short

    async def _start_witness(self) -> None:
        listen = self.options.lan.gateway if self.options.lan else "127.0.0.1"
        backend = self.options.backend
        # A real OpenAI-compatible model is reached through the witness in relay mode, which
        # records what each request sent; the Copilot service leaves the witness idle.
        relay = ["--relay-to", backend.provider_url] if backend.kind == OPENAI_COMPATIBLE else []
        try:
            self.witness_url = await start_witness(
                self.tracker, self.options.run_dir / "witness.stderr", "--evidence", str(self.evidence_path), *relay,
                host=listen,
            )
        except WitnessStartError as error:
            raise CoordinatorError(str(error)) from None

    async def _start_zygote(self) -> None:
        if not self.options.fork_workers:
            return
        zygote = Zygote(self.tracker, self.options.run_dir)
        try:
            await zygote.start()
        except RuntimeError as error:
            raise CoordinatorError(str(error)) from None
        self.zygote = zygote

    async def run_scenario(self, scenario: Scenario) -> ScenarioResult:
        started = time.monotonic()
        fact = self.options.fact
        result = ScenarioResult(scenario.name, scenario.title, scenario.proves, scenario.does_not_prove, fact.value)
        skipped = self._cannot_run(scenario)
        if skipped:
            result.skipped_reason = skipped
            return result
        workdir = self.options.run_dir / scenario.name
        (workdir / "cwd").mkdir(parents=True, exist_ok=True)
        hosts = self._hosts_for(scenario, workdir)
        if self.options.databases:
            await asyncio.to_thread(self.options.databases.prepare, scenario.name, scenario.store)
        try:
            await self._run_steps(scenario, result, workdir, hosts)
        finally:
            for host in hosts.values():
                await host.close()
        result.evidence = [e for e in read_evidence(self.evidence_path) if e.scenario == scenario.name]
        result.seconds = time.monotonic() - started
        return result

    async def _run_steps(self, scenario: Scenario, result: ScenarioResult, workdir: Path, hosts: dict[str, Host]) -> None:
        session_id = scenario.session_id or new_session_id()
        turn = 1
        previous_home: Path | None = None
        for step in scenario.steps:
            step_id = session_id if step.session == "passed" else new_session_id()
            home = prepare_home(workdir, step.name, step.home, previous_home, step_id)
            if step.wait:
                # Waiting costs no CPU: let another scenario run meanwhile.
                await self._slots.give_back()
                try:
                    await asyncio.sleep(step.wait)
                finally:
                    await self._slots.take(returning=True)
            if step.tamper:
                tamper_with_fact(home, step_id, self.options.fact)
            host = hosts[step.host]
            spec = self._spec(scenario, step, host, home, step_id, turn)
            outcome = await self._run_step(spec, step, host, home, workdir)
            result.steps.append(outcome)
            if step.session == "passed" and outcome.reported_session_id:
                session_id = outcome.reported_session_id
            turn += sum(TURNS_PER_ACTION.get(action, 0) for action in step.actions)
            previous_home = home

    def _cannot_run(self, scenario: Scenario) -> str | None:
        if scenario.store == "postgres" and (self.options.databases is None or not self.options.databases.postgres_url):
            return "no PostgreSQL server in this run"
        for name, kind in scenario.hosts.items():
            if name in self.options.remote_hosts:
                continue
            if self.options.backend.kind == COPILOT:
                return f"host '{name}' ({kind}): a simulated host has no route to the Copilot service on the internet"
            problem = missing_capability(kind) or (None if self.options.lan else self.options.lan_problem)
            if problem:
                return f"host '{name}' ({kind}): {problem}"
        return None

    def _hosts_for(self, scenario: Scenario, workdir: Path) -> dict[str, Host]:
        hosts: dict[str, Host] = {LOCAL: LocalHost(LOCAL, self.zygote)}
        witness = urlsplit(self.witness_url)
        for name, kind in scenario.hosts.items():
            if name in self.options.remote_hosts:
                hosts[name] = SshHost(name, self.options.remote_hosts[name], witness.hostname, witness.port)
            elif kind == "namespace":
                hosts[name] = NamespaceHost(name, self.options.lan, [self.options.run_dir], self.zygote)
            else:
                machine = NamespaceHost(name, self.options.lan, [self.options.run_dir])
                hosts[name] = NamespaceSshHost(name, machine, workdir / f"ssh-{name}", witness.hostname, witness.port)
        token = self.options.backend.token_env
        for host in hosts.values():
            host.passed_env = (token,) if token else ()
        return hosts

    def _spec(self, scenario: Scenario, step: Step, host: Host, home: Path, session_id: str, turn: int) -> WorkerSpec:
        fact, backend = self.options.fact, self.options.backend
        tags = {
            TAG_HEADERS["scenario"]: scenario.name,
            TAG_HEADERS["step"]: step.name,
            TAG_HEADERS["host"]: host.name,
            FACT_HEADER: url_quote(fact.stated_text),
        }
        return WorkerSpec(
            scenario=scenario.name, step=step.name, host=host.name,
            # an SSH host runs the runtime installed on its own machine
            runtime_path="" if isinstance(host, SshHost) else str(self.options.runtime_path),
            home=host.home(home), witness_url=host.witness_url(self.witness_url),
            fact_value=fact.value, fact_topic=fact.topic,
            actions=step.actions, session_id=session_id, first_turn=turn, tags=tags,
            store=self._store_url(scenario, host),
            owner=step.principal, guarded=step.guarded, reuse=step.reuse,
            # with the sessions in a home directory, owners and receipts go to a registry file
            registry=self._registry_url(scenario, host),
            model=backend.model, backend=backend.kind, api_key_env=backend.api_key_env, token_env=backend.token_env,
            without_provider=step.provider == "omitted",
            secrets={} if host.carries_environment else backend.secret_env(),
        )

    def _registry_url(self, scenario: Scenario, host: Host) -> str | None:
        """A registry file beside a home-directory store, for workers on this machine (a
        simulated host cannot see the run's files; guarded scenarios run locally)."""
        if scenario.store != "home" or host.kind != "local":
            return None
        return sqlite_url(self.options.run_dir / scenario.name / "registry.db")

    def _store_url(self, scenario: Scenario, host: Host) -> str | None:
        if scenario.store == "home":
            return None
        return self.options.databases.url(scenario.name, scenario.store, on_simulated_host=host.kind != "local")

    async def _run_step(self, spec: WorkerSpec, step: Step, host: Host, home: Path, workdir: Path) -> StepResult:
        store = "home" if spec.store is None else urlsplit(spec.store).scheme.replace("postgresql", "postgres")
        outcome = StepResult(spec.scenario, spec.step, spec.host, step.home, spec.session_id, store=store)
        stderr_path = workdir / f"worker-{step.name}.stderr"
        with stderr_path.open("wb") as stderr:
            process = await host.start_worker(self.tracker, home, stderr, workdir / "cwd")
            process.stdin.write(spec.to_json().encode())
            await process.stdin.drain()
            process.stdin.close()
            try:
                await asyncio.wait_for(self._read_events(process, outcome, step.crash), self.options.step_timeout)
            except asyncio.TimeoutError:
                outcome.timed_out = True
            else:
                # Its output has ended; a forked host worker's outer process may need a
                # moment more to pass the exit status on. Whatever is left then is killed.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(process.wait(), WORKER_EXIT_GRACE_SECONDS)
            self.tracker.kill_tree(process.pid)
            outcome.exit_code = await process.wait()
            self.tracker.forget(process.pid)
        outcome.stderr_tail = stderr_path.read_text(errors="replace")[-2000:]
        return outcome

    async def _read_events(self, process: asyncio.subprocess.Process, outcome: StepResult, crash: str) -> None:
        async for raw in process.stdout:
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                continue  # the worker keeps stdout clean; anything else is not evidence
            outcome.events.append(event)
            if event.get("event") == "holding":
                await self._crash(process, crash)
                outcome.killed_on_purpose = True

    async def _crash(self, process: asyncio.subprocess.Process, scope: str) -> None:
        """Simulate a crash right after a turn answered, with no close.

        ``process-tree``: the worker and its runtime get SIGKILL in one signal, as when a
        machine or container dies. ``sdk-process``: only the worker (the app holding the
        SDK client) is killed; its runtime sees its pipe close and is left to end by
        itself, which is what makes the difference worth measuring."""
        markers = runtime_markers.held_by_runtimes_of(process.pid)
        try:
            if scope == "sdk-process":
                os.kill(process.pid, signal.SIGKILL)
                await self.tracker.wait_group_gone(process.pid, RUNTIME_EXIT_TIMEOUT)
            self.tracker.kill_tree(process.pid)
            await process.wait()
        finally:
            runtime_markers.remove(markers)
