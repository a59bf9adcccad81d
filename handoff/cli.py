"""The `handoff` command. Thin on purpose: parse, call, print, choose the exit code.

Exit codes: 0 every scenario came out as its file expects, 1 some did not, 2 bad input
(the message says what and how to fix it), 3 the tool itself failed, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from handoff import report, runner, scenario as scenarios
from handoff.coordinator import CoordinatorError
from handoff.errors import UserError
from handoff.fact import DEFAULT_TOPIC, DEFAULT_VALUE, Fact
from handoff.hosts import SshTarget

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="Measure what Copilot SDK session persistence keeps.")


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
) -> None:
    """Run scenarios and print the table of which turns kept the context."""
    try:
        if not fact.strip() or not topic.strip():
            raise UserError("--fact and --topic must not be empty")
        chosen = scenarios.select(names or [])
        remote = _remote_hosts(host or [], chosen)
        outcome = runner.run(chosen, Fact(fact, topic), jobs, keep, remote)
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


@app.command()
def witness(
    port: int = typer.Option(0, help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    evidence: Optional[Path] = typer.Option(None, help="Append a JSON line per request to this file."),
) -> None:
    """Run the witness model standalone (an OpenAI-compatible endpoint)."""
    from handoff.witness.__main__ import serve

    raise typer.Exit(serve(host, port, evidence))


def main() -> None:
    try:
        app()
    except Exception as error:  # a bug in the tool: say so in one line, exit 3
        print(f"internal error: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(3)
