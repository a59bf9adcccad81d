"""The `handoff` command: which name is which command (handoff/commands/), and the one door
every command goes through. Thin on purpose: a command maps its options to what it does
(handoff/app/) and how it went to an exit code.

Exit codes (handoff.checker.verdicts.ExitCode): 0 every verdict as its scenario expects;
1 some verdict contradicted its expectation; 2 bad input (the message says what and how
to fix it); 3 the tool itself failed; 4 nothing contradicted, but some turns could not
be judged (unknown, crashed) or nothing was judged at all; 130 interrupted; 141 what
read the output went away (`| head`), so the verdicts' code could not be told.
"""

from __future__ import annotations

import errno
import inspect
import os
import re
import sys

import typer
from typer.core import TyperGroup

from handoff import inputs
from handoff.commands import reading, running, tools
from handoff.errors import UserError
from handoff.printable import printed_as_text

EXIT_CODES = ("Exit codes: 0 every verdict as expected; 1 some verdict contradicted its expectation; 2 bad input; "
              "3 the tool itself failed; 4 nothing contradicted, but some turns could not be judged (unknown, "
              "crashed) or none were; 130 interrupted; 141 what read the output went away.")
READER_GONE = 141  # as a shell reports a process that SIGPIPE ended


NARROWEST = 40  # columns: below this no table, help or report of this tool can be read


def _columns_that_fit() -> None:
    """A COLUMNS no output fits in (0 printed nothing at all, 1 a character a line) is
    left out, so the terminal's own width is used."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and not (columns.isdigit() and int(columns) >= NARROWEST):
        del os.environ["COLUMNS"]


class _CheckedArguments(TyperGroup):
    """The one door: what no command can use (text that is not UTF-8, an empty value) is
    refused here, before any command reads its options."""

    def parse_args(self, context, args):
        _columns_that_fit()
        try:
            inputs.current_directory()
            inputs.environment()
            inputs.arguments(list(args))
        except UserError as error:
            typer.echo(f"error: {error}", err=True)
            context.exit(2)
        return super().parse_args(context, args)


app = typer.Typer(cls=_CheckedArguments, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help=f"Measure what Copilot SDK session persistence keeps.\n\n{EXIT_CODES}")


@app.callback()
def _text_only(context: typer.Context) -> None:
    # Whatever a command prints shows control characters from scenario and run text
    # escaped (handoff/printable.py), for every command, through one door.
    context.with_resource(printed_as_text())


app.command()(running.run)
app.command()(running.skew)
app.command("list")(reading.list_scenarios)
app.command("runs")(reading.list_runs)
app.command("report")(reading.report_run)
app.command("diff")(reading.diff_runs)
app.command("resupply")(reading.resupply)
sessions_app = typer.Typer(help="The sessions in a Copilot home, a stored run or a database store.")
app.add_typer(sessions_app, name="sessions")
sessions_app.command("list")(reading.sessions_list)
app.command()(tools.witness)
app.command()(tools.chat)
app.command()(tools.conform)
app.command()(running.lab)
export_app = typer.Typer(help="What a scenario becomes elsewhere.")
app.add_typer(export_app, name="export")
export_app.command("k8s")(tools.export_k8s)
image_app = typer.Typer(help="The worker image container hosts run in (see the Containerfile).")
app.add_typer(image_app, name="image")
image_app.command("build")(tools.image_build)
image_app.command("tag")(tools.image_tag)
app.command()(tools.clean)
app.command()(tools.doctor)


def _paragraphs(text: str | None) -> str | None:
    """A docstring as the help formatter should have it: each paragraph on one line, which
    it wraps to the terminal (the docstring's own line breaks came out as ragged lines),
    a line that starts a list item or is indented kept on its own."""
    if not text:
        return text
    joined = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        lines = paragraph.split("\n")
        kept = [lines[0]]
        for line in lines[1:]:
            if line.startswith(" ") or re.match(r"([-*]|\d+[.)]) ", line):
                kept.append(line)
            else:
                kept[-1] += " " + line.strip()
        joined.append("\n".join(kept))
    return "\n\n".join(joined)


for _typer in (app, sessions_app, export_app, image_app):
    for _info in _typer.registered_commands:
        _info.help = _paragraphs(_info.help or _info.callback.__doc__)


def main() -> None:
    if sys.stdout is None or sys.stderr is None:  # started with >&- or 2>&-
        _refuse_closed_streams()
    for stream in (sys.stdout, sys.stderr):  # a fact the terminal's encoding lacks (PYTHONIOENCODING=ascii) shows escaped
        stream.reconfigure(errors="backslashreplace")
    try:
        app()
    except SystemExit as done:
        if _interrupted_unannounced(done):
            from handoff.app.execute import after_interrupt

            print(f"error: {after_interrupt()}", file=sys.stderr)
        if _reader_gone(done):
            # typer says 1 for this, which here means a contradicted verdict
            raise SystemExit(READER_GONE) from None
        raise
    except Exception as error:  # a bug in the tool: say so in one line, exit 3
        print(f"internal error: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(3)


def _refuse_closed_streams() -> None:
    """A command's table, report or transcript has nowhere to go, or its errors have not:
    say so on whichever of the two is open, before anything starts."""
    which = "standard output" if sys.stdout is None else "standard error"
    open_one = sys.stderr or sys.stdout
    if open_one is not None:
        print(f"error: {which} is closed; give it a place, e.g. >/dev/null", file=open_one)
    sys.exit(2)


def _reader_gone(done: SystemExit) -> bool:
    """typer's exit for a write to a pipe whose reader has gone (EPIPE)."""
    cause = done.__context__
    return done.code == 1 and isinstance(cause, OSError) and cause.errno == errno.EPIPE


def _interrupted_unannounced(done: SystemExit) -> bool:
    """A Ctrl-C that no command caught (one that came while typer read the options, or
    before a command's own handling began): typer turns it into exit 130 without a word.
    A command that caught it has said what it stopped (handoff/commands/common.py)."""
    exited = done.__context__
    return isinstance(exited, typer.Exit) and isinstance(exited.__cause__, KeyboardInterrupt)
