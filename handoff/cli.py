"""The `handoff` command. Thin on purpose: parse, call, print, choose the exit code.

Exit codes: 0 every scenario came out as its file expects, 1 some did not, 2 bad input
(the message says what and how to fix it), 3 the tool itself failed, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from handoff import report, runner, scenario as scenarios
from handoff.coordinator import CoordinatorError
from handoff.errors import UserError
from handoff.fact import DEFAULT_TOPIC, DEFAULT_VALUE, Fact
from handoff.hosts import SshTarget

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="Measure what Copilot SDK session persistence keeps.")


# The model backend options, shared by `run` and `lab` (see handoff.backends).
BackendOption = Annotated[str, typer.Option(
    help="Where the model comes from: witness (embedded), copilot (the GitHub Copilot service; token from "
         "COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN) or openai-compatible (--provider-url, e.g. Ollama).")]
ModelOption = Annotated[Optional[str], typer.Option(
    help="Model id. Default: handoff-witness; claude-haiku-4.5 with --backend copilot; required with openai-compatible.")]
ProviderUrlOption = Annotated[Optional[str], typer.Option(
    help="openai-compatible: the endpoint, e.g. http://localhost:11434/v1.")]
ApiKeyEnvOption = Annotated[Optional[str], typer.Option(
    metavar="VAR", help="openai-compatible: the NAME of the variable holding the API key.")]


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@app.command()
def run(
    names: list[str] = typer.Argument(None, metavar="[SCENARIO]...", help="Scenario names (default: all)."),
    fact: str = typer.Option(DEFAULT_VALUE, help="The value the model is asked to remember."),
    topic: str = typer.Option(DEFAULT_TOPIC, help="What the value is a favourite of."),
    jobs: int = typer.Option(os.cpu_count() or 1, min=1, help="Scenarios run at once."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Also write full results here."),
    keep: Optional[Path] = typer.Option(None, help="Copy the run's homes, logs and evidence here."),
    host: list[str] = typer.Option(
        None, metavar="NAME=ssh://user@machine[:port][/home][?project=DIR]",
        help="Run the scenario host NAME on a real machine over SSH.",
    ),
    store: Optional[str] = typer.Option(
        None, metavar="postgresql://user@host:port/db",
        help="PostgreSQL server for the database scenarios (default: a throwaway embedded one).",
    ),
    backend: BackendOption = "witness",
    model: ModelOption = None,
    provider_url: ProviderUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    spawn_workers: bool = typer.Option(False, "--spawn-workers", help="Start every local worker as a new interpreter "
                                       "instead of forking it from the zygote that has the SDK imported (slower; "
                                       "for comparison)."),
) -> None:
    """Run scenarios and print the table of which turns kept the context."""
    from handoff import backends

    try:
        chosen_backend = backends.choose(backend, model, provider_url, api_key_env)
        if not fact.strip() or not topic.strip():
            raise UserError("--fact and --topic must not be empty")
        chosen = scenarios.select(names or [])
        remote = _remote_hosts(host or [], chosen)
        if store is not None and not store.startswith(("postgres://", "postgresql://")):
            raise UserError(f"--store {store}: give a PostgreSQL URL such as postgresql://user@host:5432/db")
        jobs = _jobs_for_memory(jobs, chosen)
        outcome = runner.run(chosen, Fact(fact, topic), jobs, keep, remote, store, chosen_backend,
                             fork_workers=not spawn_workers)
    except UserError as error:
        raise _fail(str(error), 2)
    except CoordinatorError as error:
        raise _fail(str(error), 3)
    except KeyboardInterrupt:
        raise _fail("interrupted; every worker, runtime and temporary file was removed", 130)
    typer.echo(report.render(outcome.results, outcome.rows, fact))
    if json_path is not None:
        report.write_json(json_path, outcome.results, outcome.rows)
    raise typer.Exit(0 if outcome.all_as_expected else 1)


def _jobs_for_memory(requested: int, chosen: list) -> int:
    """``--jobs``, lowered when this machine's available memory cannot hold that many
    scenarios' runtimes at once (see capacity.py); the run says so on stderr."""
    import psutil

    from handoff import capacity

    per_job, available = capacity.bytes_per_job(chosen), psutil.virtual_memory().available
    fitting = capacity.jobs_that_fit(requested, per_job, available)
    if fitting < min(requested, len(chosen)):  # more jobs than scenarios would not run anyway
        typer.echo(capacity.lowered_note(requested, fitting, per_job, available), err=True)
    return fitting


def _remote_hosts(options: list[str], chosen: list) -> dict[str, SshTarget]:
    known = {name for item in chosen for name in item.hosts}
    remote = {}
    for option in options:
        name, separator, url = option.partition("=")
        if not separator or not name:
            raise UserError(f"--host {option}: expected NAME=ssh://user@machine")
        if name not in known:
            raise UserError(f"--host {name}: no selected scenario has a host named {name!r} (hosts: {', '.join(sorted(known)) or 'none'})")
        remote[name] = SshTarget.parse(name, url)
    return remote


@app.command("list")
def list_scenarios() -> None:
    """List the scenarios in the default matrix, in ladder order."""
    try:
        loaded = scenarios.select([])
    except UserError as error:
        raise _fail(str(error), 2)
    for item in loaded:
        typer.echo(f"{item.name:28} {item.title}")


sessions_app = typer.Typer(help="The session registry kept in a database store.")
app.add_typer(sessions_app, name="sessions")


@sessions_app.command("list")
def sessions_list(
    store: str = typer.Option(..., metavar="URL", help="postgresql://... or sqlite:///path/to/store.db"),
    owner: Optional[str] = typer.Option(None, help="Only sessions of this owner."),
) -> None:
    """List registered sessions, most recently active first: discovery that works on
    every host that reaches the database, unlike the runtime's own list_sessions."""
    from handoff.registry import Registry
    from handoff.stores.database import connect

    try:
        database = connect(store)
    except UserError as error:
        raise _fail(str(error), 2)
    try:
        typer.echo(report.sessions_table(Registry(database).sessions(owner)))
    finally:
        database.close()


@app.command()
def witness(
    port: int = typer.Option(0, help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    evidence: Optional[Path] = typer.Option(None, help="Append a JSON line per request to this file."),
) -> None:
    """Run the witness model standalone (an OpenAI-compatible endpoint)."""
    from handoff.witness.__main__ import serve

    raise typer.Exit(serve(host, port, evidence))


@app.command()
def lab(
    backend: BackendOption = "witness",
    model: ModelOption = None,
    provider_url: ProviderUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    resume: Optional[str] = typer.Option(None, metavar="ID", help="Only turn 2: resume ID (from an earlier run) and ask. "
                                         "Run it as a second process to prove the resume across a process boundary."),
    session_id: Optional[str] = typer.Option(None, metavar="ID", help="A stable id, e.g. analyst-demo, instead of a random sdklabs-… one."),
    resume_most_recent: bool = typer.Option(False, "--resume-most-recent", help="Only turn 2: list the stored sessions and resume the newest."),
    third_turn: bool = typer.Option(False, "--third-turn", help="The lab's exercise: after the metadata, resume again and ask once more."),
    home: Path = typer.Option(None, metavar="DIR", show_default=False, help="The COPILOT_HOME the runtime stores sessions in. Default: "
                              ".state/lab-home in this project, the same for every run, so that `--resume ID` in another "
                              "terminal finds the session (your ~/.copilot is not touched)."),
    fact: str = typer.Option(DEFAULT_VALUE, help="The value the model is asked to remember."),
    topic: str = typer.Option(DEFAULT_TOPIC, help="What the value is a favourite of."),
) -> None:
    """Lab 05 ("sessions"): the lab's transcript on the real runtime.

    Exit codes: 0 the resumed session named the fact, 1 it did not, 2 bad input or
    configuration (unknown id, no token, a refused key), 3 something else failed,
    130 interrupted."""
    from handoff import backends, lab as labs

    try:
        chosen = backends.choose(backend, model, provider_url, api_key_env)
        options = labs.LabOptions(chosen, Fact(fact, topic), home or labs.DEFAULT_HOME, session_id, resume,
                                  resume_most_recent, third_turn)
        code = labs.run_lab(options, typer.echo, lambda line: typer.echo(line, err=True))
    except UserError as error:
        raise _fail(str(error), 2)
    except labs.LabFailure as error:
        raise _fail(str(error), 3)
    except KeyboardInterrupt:
        raise _fail("interrupted; the witness model and the runtime were stopped", 130)
    raise typer.Exit(code)


@app.command()
def doctor() -> None:
    """What is ready and what is missing (run this first when something fails).

    Exit code 0 when the default matrix can run, 1 when a line marked FAIL must be fixed."""
    from handoff import doctor as checks

    sections = checks.diagnose()
    typer.echo(checks.render(sections))
    raise typer.Exit(0 if checks.ready(sections) else 1)


def main() -> None:
    try:
        app()
    except Exception as error:  # a bug in the tool: say so in one line, exit 3
        print(f"internal error: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(3)
