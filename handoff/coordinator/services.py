"""What every scenario of one run shares, started once and closed once.

The process tracker, the run's temporary directory, the witness model, the zygote that
forks workers, the simulated LAN (when a scenario has a namespace, ssh or container host),
the run's databases (a throwaway PostgreSQL when a scenario needs one and none was named)
and its containers' engine, image, network and lifeline (when a scenario has a container
host).
None of them carries anything from one scenario to another that a proof depends on: the
witness answers each request from that request alone, the zygote never runs a session,
and each scenario gets its own homes and its own database schema (kept, on a server the
user named: see stores/shared.py).

A service that cannot start is recorded as the reason the scenarios that need it cannot
run (they end *crashed* or *skipped* with that reason); only the witness and the zygote,
which every scenario needs, end the whole run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from urllib.parse import urlsplit
from dataclasses import dataclass, field
from pathlib import Path

from handoff import versions
from handoff.containers.engine import Engine
from handoff.coordinator.observer import RunObserver, Unobserved
from handoff.coordinator.run_containers import RunContainers
from handoff.fact import Fact
from handoff.faults.kinds import stops_the_database
from handoff.hosts.capability import missing_capability
from handoff.hosts.network import Lan, NetworkError
from handoff.hosts.ssh import SshTarget
from handoff.hosts.zygote import Zygote
from handoff.processes import ProcessTracker
from handoff.protocol import DEFAULT_RUN_BACKEND, OPENAI_COMPATIBLE, Backend
from handoff.scenario import Scenario
from handoff.stores.postgres_server import ThrowawayPostgres
from handoff.stores.shared import RunDatabases
from handoff.witness.launch import WitnessStartError, start_witness
from handoff.witness.tags import RUN_TOKEN_VARIABLE
from handoff.words import ENGINE_HOST_KINDS, HostKind, StoreKind


class CoordinatorError(Exception):
    """Something the tool itself could not do (exit code 3)."""


@dataclass(frozen=True)
class RunSettings:
    """The choices a run was started with (checked before anything starts: handoff/app/)."""

    fact: Fact = Fact()
    jobs: int = 1
    backend: Backend = DEFAULT_RUN_BACKEND
    remote_hosts: dict[str, SshTarget] = field(default_factory=dict)  # --host NAME=ssh://...
    store_url: str | None = None  # --store: a PostgreSQL server of the user's
    fork_workers: bool = True  # workers are forked from a zygote that has the SDK imported
    step_timeout: float = 120.0
    engine: str = "podman"  # the container engine for container hosts
    observer: RunObserver = field(default_factory=Unobserved, compare=False)  # told as scenarios start and end
    # Seconds each scenario took when it last ran (handoff/runs/costs.py): the order they start in.
    measured_seconds: dict[str, float] = field(default_factory=dict)


class RunServices:
    def __init__(self, settings: RunSettings, runtime_path: Path, run_dir: Path, tracker: ProcessTracker,
                 tag: str | None = None):
        self.settings = settings
        self.tag = tag  # the run id's last part: it names what the run keeps on a user's server
        self.runtime_path = runtime_path
        self.run_dir = run_dir
        self.tracker = tracker
        self.evidence_path = run_dir / "witness-evidence.jsonl"
        self.witness_url = ""
        self.zygote: Zygote | None = None
        self.lan: Lan | None = None
        self.lan_problem: str | None = None  # why there is no LAN although a scenario needs one
        self.databases = RunDatabases(run_dir, settings.store_url, None, owned=False, tag=tag)
        self.database_problem: str | None = None  # why the throwaway PostgreSQL did not start
        # The app's key for minting guarded ids: made per run, given to guarded workers in
        # their spec (on stdin), never written to the record or shown.
        self.app_key = secrets.token_hex(32)
        # The witness hears only requests carrying this (witness/server.py, _from_the_run):
        # another local user reaching its port can neither add evidence nor hold an answer.
        self.witness_token = secrets.token_hex(16)
        self._server: ThrowawayPostgres | None = None
        self._servers: list[ThrowawayPostgres] = []  # the run's and the scenarios' own, stopped at close
        self.containers = RunContainers(Engine(settings.engine), run_dir, runtime_path)
        self._container_subnet: str | None = None
        # Started side by side with the witness and the zygote; only some scenarios wait for
        # them, each for what it needs (ready_for): a PostgreSQL scenario does not wait for
        # the containers' image, nor a container scenario on a home store for the database.
        self._database: asyncio.Future | None = None
        self._containers: asyncio.Future | None = None
        self._zygote: asyncio.Future | None = None

    async def start(self, scenarios: list[Scenario]) -> None:
        self._start_lan(scenarios)
        containers = any(kind in ENGINE_HOST_KINDS for s in scenarios for kind in s.hosts.values())
        if containers:  # first: the database must know an engine network's subnet, if there is one
            pods = any(kind == HostKind.POD for s in scenarios for kind in s.hosts.values())
            self._container_subnet = await self.containers.create_network(self.tracker, self.lan_problem, pods)
        # None of these needs another, and each takes a moment: start them side by side. Every
        # scenario needs the witness; only some need the zygote (its SDK import is the longest
        # start, ~0.9 s), the database or the containers' image, and the others start while
        # those are still being made (ready_for).
        self._database = _started(self._start_database(scenarios))
        if containers and self.lan:
            self._containers = _started(self.containers.start(self.tracker, self.lan))
        self._zygote = _started(self._start_zygote(scenarios))
        try:
            await self._start_witness()
        except BaseException:
            for started in (self._database, self._containers, self._zygote):
                if started is not None:
                    started.cancel()
                    with contextlib.suppress(BaseException):
                        await started
            raise

    async def ready_for(self, scenario: Scenario) -> None:
        """Wait until what this scenario needs of the run's services has started (or failed
        to start, which its placement then reports)."""
        if self._zygote is not None and self._forks_workers(scenario):
            await asyncio.shield(self._zygote)  # its failure ends the run (the scenarios running are stopped)
        if scenario.store == StoreKind.POSTGRES and self._database is not None:
            await asyncio.shield(self._database)
        if any(kind in ENGINE_HOST_KINDS for kind in scenario.hosts.values()) and self._containers is not None:
            await asyncio.shield(self._containers)

    def _forks_workers(self, scenario: Scenario) -> bool:
        """Whether a step of the scenario runs on this machine or a namespace host with the
        tool's own SDK: a worker the zygote forks. (The others are new interpreters: in a
        container, over SSH, or with another SDK.)"""
        for step in scenario.steps:
            kind = HostKind.LOCAL if step.host == HostKind.LOCAL else scenario.hosts.get(step.host)
            remote = step.host in self.settings.remote_hosts
            if kind in (HostKind.LOCAL, HostKind.NAMESPACE) and not remote and step.sdk in (None, versions.DEFAULT_SDK):
                return True  # (a skew cell names the default SDK too: its worker is forked all the same)
        return False

    def _start_lan(self, scenarios: list[Scenario]) -> None:
        """A simulated LAN when some scenario has a namespace, ssh or container host that is
        not remote (containers reach the run's services at its gateway)."""
        needed = any(name not in self.settings.remote_hosts for s in scenarios for name in s.hosts)
        if not needed:
            return
        self.lan_problem = missing_capability(HostKind.NAMESPACE)
        if self.lan_problem is None:
            try:
                self.lan = Lan()
            except NetworkError as error:
                self.lan_problem = str(error)

    async def _start_database(self, scenarios: list[Scenario]) -> None:
        shared = [s for s in scenarios if s.store == StoreKind.POSTGRES and not stops_the_database(s)]
        if self.settings.store_url or not shared:
            return
        try:
            self._server, url = await self._launch_postgres()
        except Exception as error:
            self.database_problem = f"the throwaway PostgreSQL server did not start: {' '.join(str(error).split())}"
            return
        self.databases = RunDatabases(self.run_dir, url, self.lan.gateway if self.lan else None, owned=True, tag=self.tag)

    async def _launch_postgres(self) -> tuple[ThrowawayPostgres, str]:
        lan = self.lan
        listen = ["127.0.0.1"] + ([lan.gateway] if lan else [])
        trusted = ([f"{lan.subnet}.0/24"] if lan else []) + ([self._container_subnet] if self._container_subnet else [])
        server = ThrowawayPostgres(listen, trusted_networks=tuple(trusted))
        # Known before it exists: a Ctrl-C while its files are being made (in a thread that
        # runs on) must still see it stopped and its files removed, in close().
        self._servers.append(server)
        await asyncio.to_thread(server.prepare)
        server.launch()  # from the loop's thread, which lives as long as the run: the server dies with it
        return server, await asyncio.to_thread(server.wait_ready)

    async def own_database(self, scenario: Scenario) -> tuple[RunDatabases, ThrowawayPostgres | None]:
        """The databases a scenario uses: the run's, or, for a scenario whose faults stop the
        server, a throwaway server of its own, so that no other scenario running meanwhile
        loses its store. (A server named with --store is never stopped: such a fault then
        does not apply, and says so.)"""
        if not stops_the_database(scenario) or self.settings.store_url:
            return self.databases, None
        server, url = await self._launch_postgres()
        return RunDatabases(self.run_dir, url, self.lan.gateway if self.lan else None, owned=True, tag=self.tag), server

    async def _start_witness(self) -> None:
        listen = self.lan.gateway if self.lan else "127.0.0.1"
        backend = self.settings.backend
        # A real OpenAI-compatible model is reached through the witness in relay mode, which
        # records what each request sent; the Copilot service leaves the witness idle.
        relay = ["--relay-to", backend.provider_url] if backend.kind == OPENAI_COMPATIBLE else []
        try:
            self.witness_url = await start_witness(
                self.tracker, self.run_dir / "witness.stderr", "--evidence", str(self.evidence_path), *relay, host=listen,
                env={**os.environ, RUN_TOKEN_VARIABLE: self.witness_token},
            )
        except WitnessStartError as error:
            raise CoordinatorError(str(error)) from None

    async def _start_zygote(self, scenarios: list[Scenario]) -> None:
        if not self.settings.fork_workers:
            return
        # The PostgreSQL driver, which a worker on a PostgreSQL store imports, only when
        # one will: it costs the zygote's start (which the first scenario waits for) ~0.1 s.
        postgres = any(s.store == StoreKind.POSTGRES for s in scenarios)
        zygote = Zygote(self.tracker, self.run_dir, preload=("psycopg",) if postgres else ())
        try:
            await zygote.start()
        except RuntimeError as error:
            raise CoordinatorError(str(error)) from None
        self.zygote = zygote

    def ports(self, databases: RunDatabases) -> dict[str, int]:
        """Where a scenario's database and the model listen, for a fault that cuts a host off."""
        found = {}
        for name, url in (("database", databases.postgres_url), ("model", self.witness_url)):
            if url and urlsplit(url).port:
                found[name] = urlsplit(url).port
        return found

    def release(self) -> None:
        """Inside the event loop, at its end: let go of the containers' lifeline."""
        self.containers.lifeline.close()

    def close(self) -> None:
        """Stop everything, whatever happened; safe to call more than once. The database
        servers first: they shut down by themselves, removing their shared memory, where
        the tracker's kill of whatever the run started would leave it behind."""
        # Each step runs even when one before it raised; an ExitStack runs them last first.
        with contextlib.ExitStack() as steps:
            steps.callback(self.tracker.reap_orphans)  # a daemon that ended after stop_all was re-parented to us
            if self.lan is not None:
                steps.callback(self.lan.close)
            steps.callback(self.containers.close)
            steps.callback(self.tracker.stop_all)
            for server in reversed(self._servers):
                steps.callback(server.stop)


def _started(start) -> asyncio.Future:
    """A service's start, begun now. Its outcome is read (and a Ctrl-C inside it is not
    reported as never retrieved) even when no scenario waits for it."""
    future = asyncio.ensure_future(start)
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    return future
