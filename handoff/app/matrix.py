"""`handoff run`: the matrix of scenarios (the ladder, or the fault scenarios) from the
options a person gave, every one checked before anything starts, then executed with its
progress on stderr and its plan said first."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from handoff import backends, inputs
from handoff import scenario_files
from handoff.app.execute import Executed, Plan, Say, execute, ready_to_run
from handoff.app.outputs import read_by_the_tool
from handoff.coordinator.services import RunSettings
from handoff.errors import UserError
from handoff.fact import DEFAULT_TOPIC, DEFAULT_VALUE
from handoff.hosts.ssh import SshTarget
from handoff.stores import database
from handoff.protocol import DEFAULT_RUN_BACKEND, WITNESS
from handoff.report import terminal
from handoff.report.progress import Progress
from handoff.runs import costs
from handoff.scenario import Scenario
from handoff.stores.database import redacted
from handoff.words import StoreKind


@dataclass(frozen=True)
class MatrixOptions:
    """`handoff run`'s options, as given."""

    names: list[str]
    runs_dir: Path
    faults: bool = False  # the fault scenarios instead of the ladder
    slow: bool = False  # the slow-tagged scenarios too (a 200-turn history): make handoff's matrix
    fact: str = DEFAULT_VALUE
    topic: str = DEFAULT_TOPIC
    jobs: int = 1
    hosts: list[str] = field(default_factory=list)  # NAME=ssh://user@machine: a scenario host on a real machine
    store: str | None = None  # a PostgreSQL server of the user's for the database scenarios
    backend: str = WITNESS
    model: str | None = None
    provider_url: str | None = None
    api_key_env: str | None = None
    spawn_workers: bool = False
    engine: str = "podman"
    keep: Path | None = None
    json_path: Path | None = None
    html_path: Path | None = None


def run_matrix(options: MatrixOptions, say: Say, note: Say) -> Executed:
    """Check the options, run the chosen scenarios and keep what they observed. The plan
    is said (``say``) once the run's own checks have passed; notes go to ``note``."""
    backend = backends.choose(options.backend, options.model, options.provider_url, options.api_key_env,
                              api_model=DEFAULT_RUN_BACKEND.model)
    fact = inputs.fact(options.fact, options.topic)
    chosen = _chosen(options)
    remote = remote_hosts(options.hosts, chosen)
    _check_places(options)
    if options.store is not None and not any(s.store == StoreKind.POSTGRES for s in chosen):
        raise UserError("--store: none of the chosen scenarios keeps its sessions in a database, so it would go "
                        "unused; choose a postgres scenario (e.g. cross-process-postgres) or leave --store out")
    if options.store is not None:  # reached once now, or every scenario on it would crash after the plan
        try:
            database.connect(options.store).close()
        except UserError as error:
            raise UserError(f"--store: {error}") from None
    jobs = ready_to_run(chosen, options.jobs, note)
    plan = terminal.plan(fact, len(chosen), jobs, backend)
    with Progress(chosen, fact, backend, on_start=lambda: say(plan)) as progress:
        settings = RunSettings(fact=fact, jobs=jobs, backend=backend, remote_hosts=remote, store_url=options.store,
                               fork_workers=not options.spawn_workers, engine=options.engine, observer=progress,
                               measured_seconds=costs.load(options.runs_dir))
        done = execute(Plan(chosen, settings, options.runs_dir, keep_dir=options.keep))
    costs.update(options.runs_dir, done.record)
    return done


def _chosen(options: MatrixOptions) -> list[Scenario]:
    if options.faults and options.names:
        raise UserError("--faults runs the fault scenarios; name scenarios without it, or give --faults alone")
    # --slow adds to what runs when no scenario is named; a named one runs whatever its tags
    # (so `make handoff ARGS="cross-process"` runs just that one)
    also = ("slow",) if options.slow else ()
    if options.faults:
        return [s for s in scenario_files.select([], tags=("faults", *also)) if "faults" in s.tags]
    return scenario_files.select(options.names, tags=also)


def _check_places(options: MatrixOptions) -> None:
    """Where the run goes and what it writes, before anything starts."""
    if options.store is not None:
        inputs.network_url(options.store, "--store", ("postgres", "postgresql"), "postgresql://user@host:5432/db",
                           needs_host=False)
    read = read_by_the_tool(options.runs_dir, *options.names)
    for path, option in ((options.json_path, "--json"), (options.html_path, "--html")):
        if path is not None:
            inputs.writable_file(path, option, keep=read)
    if options.json_path is not None and options.html_path is not None:
        inputs.distinct_outputs({"--json": options.json_path, "--html": options.html_path})
    if options.keep is not None:
        inputs.fresh_directory(options.keep, "--keep")
    inputs.writable_directory(options.runs_dir, "--runs-dir")
    inputs.engine(options.engine)


def remote_hosts(options: list[str], chosen: list[Scenario]) -> dict[str, SshTarget]:
    """``--host NAME=ssh://...`` options, each naming a host of a chosen scenario."""
    known = {name for item in chosen for name in item.hosts}
    remote = {}
    for option in options:
        name, separator, url = option.partition("=")
        if not separator or not name:
            raise UserError(f"--host {option}: expected NAME=ssh://user@machine")
        if url.startswith("podman+ssh://"):
            raise UserError(f"--host {option}: a remote container engine is not supported (docs/hosts.md, Containers, says "
                            f"why); --host {name}=ssh://user@machine runs the step on that machine without a container")
        if name not in known:
            raise UserError(f"--host {name}: no selected scenario has a host named {name!r} "
                            f"(hosts: {', '.join(sorted(known)) or 'none'})")
        if name in remote:
            raise UserError(f"--host {name}: given twice; one machine per host name")
        remote[name] = SshTarget.parse(name, url)
    return remote


def kept_sessions(done: Executed, store: str | None) -> str | None:
    """Where the database scenarios' sessions stay when they ran on the user's server."""
    if store is None or not any(s.scenario.store == StoreKind.POSTGRES and s.steps for s in done.record.scenarios):
        return None
    tag = done.record.id.rsplit("-", 1)[-1]
    shown = redacted(store)  # a command to copy, unless it would carry the password
    command = f"`handoff sessions list --store '{store}'`" if shown == store else \
        "`handoff sessions list --store` with the URL you gave"
    return f"The database scenarios' sessions are kept on {shown} (schemas handoff_{tag}_*): {command} lists them."
