"""A run of scenarios, from start to record: the run's services started, every scenario
run (scheduler.py), the services closed, and what was observed returned as the run's
record (handoff/runs/record.py), nothing judged. Every process, namespace and temporary
file is gone when :func:`run` returns or raises."""


from __future__ import annotations

import ipaddress
import os
import shutil
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from handoff import owners
from handoff.backends import preflight
from handoff.coordinator.scheduler import run_all
from handoff.coordinator.services import CoordinatorError, RunServices, RunSettings
from handoff.inputs import temporary_directory
from handoff.processes import ProcessTracker, StopOnce
from handoff.runs.record import (
    RunOptions,
    RunRecord,
    ScenarioRecord,
    new_run_id,
    this_machine,
)
from handoff.errors import UserError
from handoff.hosts.local import ready_runtime
from handoff.hosts.namespace import unseen
from handoff.scenario import Scenario
from handoff.stores.database import redacted
from handoff.words import Command, HostKind, StoreKind


def run(scenarios: list[Scenario], settings: RunSettings, keep_dir: Path | None = None,
        command: Command = Command.RUN) -> RunRecord:
    """Run the scenarios and return what was observed; ``command`` is what the record is
    stored as (RUN, or SKEW for a version grid). Each scenario is run, stored and judged
    as it stands on the backend's path to a model (Scenario.on_path)."""
    scenarios = [scenario.on_path(settings.backend.path) for scenario in scenarios]
    runtime_path = ready_runtime()
    seen_by_the_hosts(runtime_path, scenarios, settings.remote_hosts)
    store_seen_by_the_hosts(settings.store_url, scenarios)
    temporary_directory()
    preflight(settings.backend)
    settings.observer.run_started()
    started = time.time()
    run_id = new_run_id(started)
    owners.claim()  # everything started from here on carries this process's pid as its owner
    with StopOnce() as stop:  # Ctrl-C or `kill` starts the cleanup; another one cannot cut it short
        run_dir = owners.make_directory(f"{owners.RUN_DIR_PREFIX}{owners.tag()}-")
        services = RunServices(settings, runtime_path, run_dir, ProcessTracker(), tag=run_id.rsplit("-", 1)[-1])
        try:
            records = stop.run(lambda: _run(scenarios, services))
        finally:
            with stop.shielded():
                try:
                    services.close()
                    if keep_dir is not None:
                        _keep(run_dir, keep_dir)
                finally:
                    shutil.rmtree(run_dir, ignore_errors=True)
    # The run's runtime is the one its default steps reported; a step that names another
    # version (a version-skew scenario, a skew cell) does not speak for the run.
    reported = next((ready.runtime_version for scenario in records
                     for planned, step in zip(scenario.scenario.steps, scenario.steps)
                     if planned.runtime is None and (ready := step.view().ready) is not None), None)
    return RunRecord(run_id, command, started, time.time(), this_machine(reported), options(settings),
                     records)


def seen_by_the_hosts(runtime: Path, scenarios: list[Scenario], remote: dict) -> None:
    """Before anything starts: a runtime the plan's simulated hosts cannot see (they have
    an empty /tmp and /run of their own) is bad input, said with where to put it, not a
    worker failing on each of those hosts minutes into the run."""
    simulated = {scenario.hosts[step.host] for scenario in scenarios for step in scenario.steps
                 if step.host != HostKind.LOCAL and step.host not in remote} & {HostKind.NAMESPACE, HostKind.SSH}
    hidden = unseen(runtime) if simulated else None
    if hidden is not None:
        raise UserError(f"COPILOT_CLI_PATH {runtime}: the simulated hosts ({', '.join(sorted(simulated))}) have an "
                        f"empty {hidden} of their own, so they cannot run it; put the runtime under the project or "
                        f"another directory outside {hidden}, or unset COPILOT_CLI_PATH")


def store_seen_by_the_hosts(store_url: str | None, scenarios: list[Scenario]) -> None:
    """Before anything starts: a store the user named by this machine's own address
    (localhost, a loopback address, a local socket) cannot be reached from the plan's
    other hosts, which are machines of their own where that address names themselves.
    Said as bad input, not found by every worker there minutes into the run."""
    if store_url is None:
        return  # the run's own server, which every host reaches at its address on the run's network
    elsewhere = sorted({scenario.hosts.get(step.host, HostKind.LOCAL) for scenario in scenarios
                        if scenario.store == StoreKind.POSTGRES for step in scenario.steps
                        if step.host != HostKind.LOCAL})
    if not elsewhere or not _names_this_machine(store_url):
        return
    raise UserError(f"--store {redacted(store_url)}: names this machine by an address only it has (localhost, a "
                    f"loopback address or a local socket), but the plan's {', '.join(elsewhere)} hosts use it too, "
                    f"and to them that address is their own; give the server's address on a network they reach "
                    f"(this machine's LAN address), or leave --store out (the run then starts a PostgreSQL server "
                    f"every host reaches)")


def _names_this_machine(url: str) -> bool:
    parts = urlsplit(url)
    query_host = dict(parse_qsl(parts.query)).get("host", "")
    host = parts.hostname or query_host or os.environ.get("PGHOST", "")  # libpq's own default, when set
    if not host or host.startswith("/") or host == "localhost":
        return True  # no host: libpq's local socket
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: whatever it resolves to is the user's to say


def _keep(run_dir: Path, keep_dir: Path) -> None:
    """Copy the run's files for inspection; sockets and FIFOs (the zygote's) are not files."""
    def not_files(folder: str, names: list[str]) -> list[str]:
        return [name for name in names if not (Path(folder, name).is_dir() or Path(folder, name).is_file())]

    try:
        shutil.copytree(run_dir, keep_dir, ignore=not_files, dirs_exist_ok=True, symlinks=True)
    except (OSError, shutil.Error) as error:
        raise CoordinatorError(f"--keep {keep_dir}: copying the run's files failed ({error}); "
                               f"the run's temporary files were removed all the same") from None


async def _run(scenarios: list[Scenario], services: RunServices) -> list[ScenarioRecord]:
    try:
        await services.start(scenarios)
        return await run_all(scenarios, services)
    finally:
        services.release()  # what lives in the event loop (the containers' lifeline), before it closes
        await services.tracker.shutdown()  # the witness, and any worker an interrupt cut short


def options(settings: RunSettings) -> RunOptions:
    """The settings as they are stored with the run: names of secrets, never values."""
    return RunOptions(
        fact=settings.fact.value, topic=settings.fact.topic, jobs=settings.jobs, backend=settings.backend,
        fork_workers=settings.fork_workers,
        remote_hosts={name: target.describe() for name, target in settings.remote_hosts.items()},
        store=redacted(settings.store_url), engine=settings.engine,
    )

