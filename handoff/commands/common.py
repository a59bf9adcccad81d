"""What the commands share: the options several of them take, and how a failure becomes
an error line and an exit code (handoff.checker.verdicts.ExitCode)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Optional

import typer

from handoff import inputs
from handoff.checker.verdicts import ExitCode
from handoff.errors import UserError

# The fact a run tells and asks about, shared by `run`, `skew`, `lab` and `export k8s`.
FactOption = Annotated[str, typer.Option(help="The value the model is asked to remember.")]
TopicOption = Annotated[str, typer.Option(help="What the value is a favourite of.")]
# The model backend options, shared by `run` and `lab` (see handoff.backends).
BackendOption = Annotated[str, typer.Option(
    help="Where the model comes from: witness (embedded, as the GitHub Copilot API: the lab's path), witness-byok "
         "(embedded, as a BYOK provider), copilot (the GitHub Copilot service; token from COPILOT_GITHUB_TOKEN, "
         "GH_TOKEN or GITHUB_TOKEN) or openai-compatible (--provider-url, e.g. Ollama).")]
ModelOption = Annotated[Optional[str], typer.Option(
    help="Model id. Default: claude-haiku-4.5 (in the lab, the one list_models offers); handoff-witness with "
         "--backend witness-byok; required with openai-compatible.")]
ProviderUrlOption = Annotated[Optional[str], typer.Option(
    help="openai-compatible: the endpoint, e.g. http://localhost:11434/v1.")]
ApiKeyEnvOption = Annotated[Optional[str], typer.Option(
    metavar="VAR", help="openai-compatible: the NAME of the variable holding the API key.")]


EngineOption = Annotated[str, typer.Option(
    "--engine", help="The container engine for container hosts: podman, or docker (needs a reachable Docker daemon).")]


def _a_directory_or_none_yet(path: Optional[Path]) -> Optional[Path]:
    """A runs directory is a directory, or nothing yet (a fresh clone has none): a file
    there would read as "no stored runs"."""
    if path is not None:
        try:
            inputs.directory_or_nothing(path, "--runs-dir")
        except UserError as error:
            raise fail(str(error), ExitCode.BAD_INPUT)
    return path


RunsDirOption = Annotated[Optional[Path], typer.Option(
    "--runs-dir", metavar="DIR", envvar="HANDOFF_RUNS_DIR", callback=_a_directory_or_none_yet,
    help="Where runs are stored (default: .state/runs in this project).")]
# How a run is shown, shared by `run`, `report` and `lab`.
FormatOption = Annotated[str, typer.Option("--format", help="table, markdown, json or html.")]
WideOption = Annotated[bool, typer.Option(
    "--wide", help="Every column of every turn (tell rows too), each rung's line and each scenario's full "
                   "explanation, instead of the learner's table that fits the terminal.")]
HtmlOption = Annotated[Optional[Path], typer.Option(
    "--html", metavar="PATH", help="Also write the HTML report here: one self-contained file with a sequence "
                                   "diagram per scenario.")]


def fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def note(line: str) -> None:
    """A line for the person on stderr: stdout is the table's, the transcript's or the report's."""
    typer.echo(line, err=True)


@contextlib.contextmanager
def run_failures():
    """What ends a run early, as its exit code: bad input 2, the tool failing 3, Ctrl-C
    130 (saying truly whether everything was removed)."""
    from handoff.app.execute import after_interrupt
    from handoff.coordinator.services import CoordinatorError

    try:
        yield
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    except CoordinatorError as error:
        raise fail(str(error), ExitCode.TOOL_FAILED)
    except KeyboardInterrupt:
        raise fail(after_interrupt(), ExitCode.INTERRUPTED)
