"""One scenario, start to end: its hosts, its steps in order, the id passed along.

For each step it prepares the home the step names, lets the session's lease run out on
its lease clock if the step asks for that (lease_clock.py: no step waits on the wall
clock), builds the worker's spec and has the step driver run it, giving the scenario's
slot to another meanwhile when the step sits out a turn time-out. The session id
travels from step to step here, as an app would pass it from one device to the next: each
step gets the id the previous steps ended up with.

Whatever goes wrong while setting up or running the scenario — a host that does not come
up, a database that is not there, a fault that did not apply, a bug — becomes this
scenario's ``crashed`` reason in its record; the other scenarios of the run go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Callable

from handoff.confined import inside
from handoff.coordinator.credentials import with_credentials
from handoff.coordinator.lease_clock import LeaseClock
from handoff.coordinator.nemesis import Nemesis
from handoff.coordinator.placement import open_hosts, step_versions, why_not_runnable
from handoff.coordinator.services import RunServices
from handoff.coordinator.slots import Slots
from handoff.coordinator.specs import worker_spec
from handoff.coordinator.step_driver import StepDriver
from handoff.faults.base import Fault, FaultTarget
from handoff.faults.catalogue import build
from handoff.hosts.base import Host
from handoff.protocol import Hold
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import LEASE_EXPIRED, Scenario, Step
from handoff.session_ids import RULE as SAFE_ID_RULE, new_session_id, safe_id
from handoff.stores.database import sqlite_url
from handoff.stores.step_homes import prepare_home
from handoff.witness.control import WitnessControl
from handoff.witness.evidence import read_calls, read_evidence
from handoff.words import HOLD_POINTS, HomeKind, StepSession, StoreKind


Placement = Callable[[Scenario, RunServices, Path, dict[str, Host]], None]


class ScenarioRun:
    def __init__(self, scenario: Scenario, services: RunServices, slots: Slots, place: Placement = open_hosts):
        self.scenario = scenario
        self.place = place  # makes the scenario's hosts (a fake one, in the unit tests)
        self.services = services
        self.settings = services.settings
        self.slots = slots
        self.workdir = inside(services.run_dir, scenario.name)
        self.nemesis = Nemesis()
        self.lease_clock = LeaseClock()
        self.databases = services.databases
        self._own_server = None  # a PostgreSQL server of the scenario's own, when its faults stop one
        self.witness = WitnessControl(services.witness_url, services.witness_token) if services.witness_url else None
        self.driver = StepDriver(services.tracker, self.settings.step_timeout, self.nemesis, self.witness)

    async def run(self) -> ScenarioRecord:
        started = time.monotonic()
        record = ScenarioRecord(self.scenario.name, self.scenario)
        record.skipped = why_not_runnable(self.scenario, self.services)
        if record.skipped:
            return record
        hosts: dict[str, Host] = {}
        try:
            (self.workdir / "cwd").mkdir(parents=True, exist_ok=True)
            await self._open(hosts)
            await self._prepare_store()
            await self._steps(record, hosts)
        except Exception as error:  # one scenario's failure stays in its own row
            record.crashed = _one_line(error)
            (self.workdir / "crash.txt").write_text(traceback.format_exc(), encoding="utf-8")
        finally:
            await self.nemesis.close()  # no fault outlives its scenario: servers started, routes back, disks freed
            if self._own_server is not None:
                await asyncio.to_thread(self._own_server.stop)
            for host in hosts.values():
                with contextlib.suppress(Exception):
                    await host.close()
            record.evidence = [e for e in read_evidence(self.services.evidence_path) if e.scenario == self.scenario.name]
            record.calls = [c for c in read_calls(self.services.evidence_path) if c.scenario == self.scenario.name]
            record.seconds = time.monotonic() - started
        return record

    async def _open(self, hosts: dict[str, Host]) -> None:
        """Make the scenario's hosts in a thread: their `ip` and `mkdir` calls would
        otherwise hold up every other scenario's events for ~40 ms a host. When the
        scenario is cancelled meanwhile, the thread still runs to its end first, so that
        every host it made is in ``hosts`` when the scenario closes them."""
        opening = asyncio.ensure_future(asyncio.to_thread(self.place, self.scenario, self.services, self.workdir, hosts))
        try:
            await asyncio.shield(opening)
        finally:
            while not opening.done():
                with contextlib.suppress(asyncio.CancelledError):  # the first cancel is already on its way up
                    await asyncio.wait({opening})
            if not opening.cancelled():
                opening.exception()  # seen: a failure after a cancel is not logged as never retrieved

    async def _prepare_store(self) -> None:
        if self.scenario.store != StoreKind.POSTGRES:
            return
        if self.services.database_problem:
            raise RuntimeError(self.services.database_problem)
        self.databases, self._own_server = await self.services.own_database(self.scenario)
        await asyncio.to_thread(self.databases.prepare, self.scenario.name, self.scenario.store)

    async def _steps(self, record: ScenarioRecord, hosts: dict[str, Host]) -> None:
        session_id = self.scenario.session_id or new_session_id()
        previous_home: Path | None = None
        for step in self.scenario.steps:
            given = {StepSession.PASSED: session_id, StepSession.SCENARIO: self.scenario.session_id}
            step_id = given.get(step.session) or new_session_id()
            home = prepare_home(self.workdir, step.name, step.home, previous_home, step_id)
            host = hosts[step.host]
            step_record = StepRecord(step.name, host.name, HomeKind.RESTARTED if step.restart else step.home,
                                     self.scenario.store, step_id)
            record.steps.append(step_record)
            if step.after == LEASE_EXPIRED:
                expiry = await asyncio.to_thread(self.lease_clock.run_out, self._coordinator_registry(), step_id)
                step_record.notes.append(expiry.note())
            step_record.lease_clock = self.lease_clock.now if step.guarded else None
            faults = tuple(build(plan) for plan in step.faults)
            target = FaultTarget(self.services.tracker, home, step_id, self.settings.fact, host=host,
                                 database=self._own_server, ports=self.services.ports(self.databases))
            versioned, runtime_path = step_versions(step)
            launch = replace(versioned, anonymous_home=step.home == HomeKind.ANONYMOUS, restart=step.restart)
            spec = await with_credentials(
                self._spec(step, host, home, step_id, runtime_path or self.services.runtime_path, faults), self.witness)
            async with self._lent_slot(step.waits_out_a_turn):
                await self.driver.run(spec, host, home, self.workdir, step_record, faults, target, launch)
            reported = step_record.view().reported_session_id
            if step.session == StepSession.PASSED and reported:
                if not safe_id(reported):  # it is about to name directories: refuse it here
                    raise ValueError(f"step {step.name}'s worker reported a session id that is not {SAFE_ID_RULE}: "
                                     f"{reported[:80]!r}")
                session_id = reported
            previous_home = home

    @contextlib.asynccontextmanager
    async def _lent_slot(self, lend: bool):
        """Give the scenario's slot to another while this one mostly waits, and take the
        next free one when it is done (before any scenario not yet started). A step that
        sits out a turn time-out works for a second or two (a runtime started, a resume,
        a question sent) and then waits the rest of the time-out doing nothing: on 2 cores
        holding its slot left a core idle for most of 20 s of the matrix."""
        if not lend:
            yield
            return
        await self.slots.give_back()
        try:
            yield
        finally:
            await self.slots.take(returning=True)

    def _spec(self, step: Step, host: Host, home: Path, session_id: str, runtime_path: Path,
              faults: tuple[Fault, ...]):
        store_url = None
        if self.scenario.store != StoreKind.HOME:
            store_url = self.databases.url(self.scenario.name, self.scenario.store, host.on_simulated_lan)
        return worker_spec(
            self.scenario.name, step, host, host.home(home), session_id, fact=self.settings.fact,
            backend=self.settings.backend, runtime_path=str(runtime_path),
            witness_url=host.witness_url(self.services.witness_url), store_url=store_url,
            registry_url=self._registry_url(host), app_key=self.services.app_key if step.guarded else "",
            turn_timeout=self.scenario.turn_timeout, known_good=self.scenario.known_good,
            holds=tuple(Hold(fault.at, fault.turn) for fault in faults if fault.at in HOLD_POINTS),
            lease_clock=self.lease_clock.now if step.guarded else None, run_token=self.services.witness_token,
            devices=host.devices(self.workdir) if step.device else "",
        )

    def _registry_url(self, host: Host) -> str | None:
        """A registry file beside a home-directory store, for workers that can open the
        run's files (a simulated host cannot; guarded scenarios run locally)."""
        if self.scenario.store != StoreKind.HOME or not host.sees_run_files:
            return None
        return sqlite_url(self.workdir / "registry.db")


    def _coordinator_registry(self) -> str | None:
        """The scenario's registry as the coordinator reaches it."""
        if self.scenario.store == StoreKind.HOME:
            return sqlite_url(self.workdir / "registry.db")
        return self.databases.url(self.scenario.name, self.scenario.store, False)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
