"""The commands that read what is there: the scenarios (`handoff list`), the stored runs
(`handoff runs`, `report`, `diff`) and the sessions (`handoff sessions list`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from handoff import inputs
from handoff import scenario_files
from handoff.app.outputs import read_by_the_tool, write_atomically, write_html
from handoff.checker.verdicts import ExitCode
from handoff.commands.common import FormatOption, RunsDirOption, WideOption, fail, note
from handoff.errors import UserError
from handoff.report import formats
from handoff.runs.store import RUNS_DIR
from handoff.words import Command


def list_scenarios() -> None:
    """List the scenarios: the default matrix in ladder order, then the slow and fault ones."""
    try:
        loaded, faults, slow = scenario_files.select([]), scenario_files.tagged("faults"), scenario_files.tagged("slow")
    except UserError as error:
        raise fail(str(error), 2)
    from handoff.report import fit

    width = max((len(item.name) for item in loaded + faults + slow), default=0) + 2
    for heading, items in (("", loaded), ("\nSlow scenarios (handoff run --slow, make handoff):", slow),
                           ("\nFault scenarios (handoff run --faults):", faults)):
        if heading and items:
            typer.echo(heading)
        for item in items:
            typer.echo("\n".join(fit.labelled(item.name, item.title, width)))


def list_runs(limit: Annotated[int, typer.Option(min=1, help="Show at most this many, newest last.")] = 20,
              runs_dir: RunsDirOption = None) -> None:
    """List stored runs: what ran, how it came out, on which versions."""
    from handoff.report.listing import runs_table

    typer.echo(runs_table(limit, runs_dir or RUNS_DIR))


def report_run(
    run_ref: Annotated[Optional[str], typer.Argument(metavar="[RUN]", help="A run id (or a unique part of it), "
                                                     "or a run directory. Default: the latest of --kind.")] = None,
    kind: Annotated[str, typer.Option(
        "--kind", help="Without RUN, the latest run of this command: run (the matrix), lab or skew.")] = "run",
    form: FormatOption = "table",
    wide: WideOption = False,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="PATH", help="Write it to this file instead of printing it.")] = None,
    runs_dir: RunsDirOption = None,
) -> None:
    """Judge a stored run again with this version's checker, and print or write it.

    The run is judged afresh from its raw events, and printed as the run printed it, or
    written (-o) in another format. Exits as `handoff run` would for that judgement.

    Examples:
      handoff report                                  # the latest run, as it printed
      handoff report --wide                           # every column, each rung explained
      handoff report --format html -o report.html     # a page with a diagram per scenario
      handoff report 20261206T223850Z-87e208 --format json"""
    from handoff.app.execute import judged_again

    try:
        if form not in formats.FORMATS:
            raise UserError(f"--format {form}: choose one of {', '.join(formats.FORMATS)}")
        if kind not in tuple(Command):
            raise UserError(f"--kind {kind}: choose one of {', '.join(Command)}")
        if output is not None:
            inputs.writable_file(output, "--output", keep=read_by_the_tool(runs_dir, run_ref))
        done = judged_again(run_ref, runs_dir or RUNS_DIR, kind)
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    record, judgement = done.record, done.judgement
    if output is None:
        typer.echo(formats.rendered(record, judgement, form, wide))
    elif form == "html":
        write_html(output, record, judgement, note)
    else:
        write_atomically(output, (formats.rendered(record, judgement, form, wide) + "\n").encode())
    raise typer.Exit(judgement.exit_code())


def resupply(
    run_ref: Annotated[Optional[str], typer.Argument(metavar="[RUN]", help="A run id (or a unique part of it), "
                                                     "or a run directory. Default: the latest run.")] = None,
    runs_dir: RunsDirOption = None,
) -> None:
    """What the app must pass again on a resume, as a Markdown table.

    From a stored run of a scenario that varies them: the provider, model, tools,
    permission handler, system message and working directory, each omitted or changed on
    a resume in a new process, and what came of it.

    Examples:
      handoff run resupply-on-resume && handoff resupply"""
    from handoff.app.execute import judged_again
    from handoff.report import resupply as table

    try:
        record = judged_again(run_ref, runs_dir or RUNS_DIR, Command.RUN).record
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    found = table.rows(record)
    typer.echo(table.markdown(found))
    raise typer.Exit(ExitCode.AS_EXPECTED if found else ExitCode.UNJUDGED)


def diff_runs(
    before: Annotated[str, typer.Argument(metavar="RUN_A")],
    after: Annotated[str, typer.Argument(metavar="RUN_B")],
    runs_dir: RunsDirOption = None,
) -> None:
    """The turns whose verdict or evidence differ between two stored runs.

    Exit 0 when none do, 1 when some do.

    Examples:
      handoff diff 20261206T223850Z-87e208 latest"""
    from handoff.app.execute import judged_again
    from handoff.report import diff

    try:
        runs = [judged_again(ref, runs_dir or RUNS_DIR) for ref in (before, after)]
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    old, new = (run.judgement for run in runs)
    paths = tuple(run.record.options.backend.path for run in runs)
    typer.echo(diff.render(old, new, paths))
    raise typer.Exit(1 if diff.differences(old, new) else 0)


def sessions_list(
    where: Annotated[Optional[str], typer.Argument(
        metavar="WHERE", show_default=False,
        help="A Copilot home (the directory that holds session-state/, e.g. ~/.copilot, or one `handoff run --keep` "
             "filled with homes), a run (an id `handoff runs` lists, or its directory) or a store (sqlite:///path, "
             "a SQLite file, postgresql://user@host:5432/db). Default: the lab's home, .state/lab-home.")] = None,
    store: Annotated[Optional[str], typer.Option(
        "--store", metavar="URL", help="The same as WHERE, as earlier versions took a store.")] = None,
    owner: Annotated[Optional[str], typer.Option(
        help="Only sessions of this owner: a store's registry records it, a run's steps act as one.")] = None,
    show_ids: Annotated[bool, typer.Option(
        "--show-ids", help="Print every id in full, also those the id rules hide as possibly carrying a secret or "
                           "personal data: to copy one. Only for your own home, run or SQLite file.")] = False,
    runs_dir: RunsDirOption = None,
) -> None:
    """List sessions, most recent first, from a Copilot home, a stored run or a store.

    A Copilot home is read from its session-state/ files, without starting a runtime; a
    stored run from its record; a database store from its session registry (discovery
    that works on every host that reaches the database, unlike the runtime's own
    list_sessions; on a PostgreSQL server also the sessions each `handoff run --store
    URL` kept there). Without WHERE, the lab's home.

    Examples:
      handoff sessions list                          # the lab's home
      handoff sessions list ~/.copilot
      handoff sessions list latest --owner bob       # the sessions bob's steps used
      handoff sessions list sqlite:///store.db --show-ids"""
    from handoff.app.sessions import listing

    if where is not None and store is not None:
        raise fail("give WHERE or --store, not both: --store URL is the same as WHERE", ExitCode.BAD_INPUT)
    try:
        text = listing(where if where is not None else store, owner, runs_dir or RUNS_DIR, show_ids)
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    typer.echo(text)
