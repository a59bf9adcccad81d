"""One `handoff run`: set up, run the coordinator, clean up whatever happens, judge."""

from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

from handoff.backends import WITNESS, WITNESS_MODEL, Backend, preflight
from handoff.checks import Row, rows_for
from handoff.coordinator import Coordinator, RunOptions
from handoff.fact import Fact
from handoff.hosts import Lan, SshTarget, missing_capability
from handoff.hosts.network import NetworkError
from handoff.processes import ProcessTracker
from handoff.results import ScenarioResult
from handoff.runtime_locator import locate_runtime
from handoff.scenario import Scenario
from handoff.stores.postgres_server import ThrowawayPostgres
from handoff.stores.shared import RunDatabases


@dataclass
class RunOutcome:
    results: list[ScenarioResult]
    rows: list[Row]

    @property
    def all_as_expected(self) -> bool:
        return all(row.match is not False for row in self.rows) and bool(self.rows)


def _interrupt(*_):
    raise KeyboardInterrupt


def _lan_if_needed(scenarios: list[Scenario], remote_hosts: dict[str, SshTarget]) -> tuple[Lan | None, str | None]:
    """A simulated LAN when some scenario has a namespace or ssh host that is not remote."""
    needed = any(name not in remote_hosts for s in scenarios for name in s.hosts)
    problem = missing_capability("namespace") if needed else None
    if not needed or problem:
        return None, problem
    try:
        return Lan(), None
    except NetworkError as error:
        return None, str(error)


def _databases(scenarios: list[Scenario], run_dir: Path, store_url: str | None, lan: Lan | None,
               ) -> tuple[RunDatabases, ThrowawayPostgres | None]:
    """The run's databases; a throwaway PostgreSQL when a scenario needs one and none was named."""
    if store_url or not any(s.store == "postgres" for s in scenarios):
        return RunDatabases(run_dir, store_url, None, owned=False), None
    listen = ["127.0.0.1"] + ([lan.gateway] if lan else [])
    server = ThrowawayPostgres(listen, trusted_network=f"{lan.subnet}.0/24" if lan else None)
    url = server.start()
    return RunDatabases(run_dir, url, lan.gateway if lan else None, owned=True), server


def run(scenarios: list[Scenario], fact: Fact, jobs: int, keep_dir: Path | None = None,
        remote_hosts: dict[str, SshTarget] | None = None, store_url: str | None = None,
        backend: Backend = Backend(WITNESS, WITNESS_MODEL), fork_workers: bool = True) -> RunOutcome:
    """Run the scenarios; every process, namespace and temporary file is gone when this
    returns or raises."""
    runtime_path = locate_runtime()
    preflight(backend)
    remote_hosts = remote_hosts or {}
    run_dir = Path(tempfile.mkdtemp(prefix="handoff-run-"))
    tracker = ProcessTracker()
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C does
    lan = databases = server = None
    try:
        lan, lan_problem = _lan_if_needed(scenarios, remote_hosts)
        databases, server = _databases(scenarios, run_dir, store_url, lan)
        options = RunOptions(fact=fact, jobs=jobs, runtime_path=runtime_path, run_dir=run_dir, lan=lan,
                             lan_problem=lan_problem, remote_hosts=remote_hosts, databases=databases, backend=backend,
                             fork_workers=fork_workers)
        results = asyncio.run(Coordinator(options, tracker).run(scenarios))
    finally:
        tracker.stop_all()
        if databases is not None:
            databases.close()
        if server is not None:
            server.stop()
        if lan is not None:
            lan.close()
        tracker.reap_orphans()  # a daemon that ended after stop_all (PostgreSQL) was re-parented to us
        signal.signal(signal.SIGTERM, previous)
        if keep_dir is not None:
            shutil.copytree(run_dir, keep_dir, dirs_exist_ok=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    by_name = {s.name: s for s in scenarios}
    rows = [row for result in results for row in rows_for(by_name[result.name], result, fact, backend.seen_on_the_wire)]
    return RunOutcome(results, rows)
