"""The commands that run something and store it as a run: `handoff run` (the matrix),
`handoff skew` (the version grid) and `handoff lab` (Lab 05's transcript)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from handoff.app.outputs import write_outputs
from handoff.checker.verdicts import ExitCode
from handoff.commands.common import (ApiKeyEnvOption, BackendOption, EngineOption, FactOption, HtmlOption, ModelOption,
                                     ProviderUrlOption, RunsDirOption, TopicOption, WideOption, fail, note,
                                     run_failures)
from handoff.errors import UserError
from handoff.fact import DEFAULT_TOPIC, DEFAULT_VALUE
from handoff.report import fit, formats, terminal
from handoff.report.summary import lab_sentence
from handoff.runs.store import RUNS_DIR


def run(
    names: list[str] = typer.Argument(None, metavar="[SCENARIO]...", help="Scenario names (default: all)."),
    fact: FactOption = DEFAULT_VALUE,
    topic: TopicOption = DEFAULT_TOPIC,
    jobs: int = typer.Option(os.cpu_count() or 1, min=1, help="Scenarios run at once."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Also write the run's record and judgement here."),
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
    engine: EngineOption = "podman",
    runs_dir: RunsDirOption = None,
    wide: WideOption = False,
    html_path: HtmlOption = None,
    faults: Annotated[bool, typer.Option("--faults", help="Run the fault scenarios (a nemesis kills, cuts off, "
                                         "fills or corrupts; docs/faults.md) instead of the ladder.")] = False,
    slow: Annotated[bool, typer.Option("--slow", help="Also run the scenarios tagged slow (a 200-turn history; "
                                       "make handoff gives it).")] = False,
) -> None:
    """Run scenarios and print the table of which turns kept the context.

    The fact and the plan come first, progress goes to stderr while it runs (one line per
    finished scenario when stderr is not a terminal), then the table, and last what
    persistence proved under each condition of the lab, naming the rungs. The run is
    stored under .state/runs/ (`handoff runs`, `handoff report`, `handoff diff`).

    Examples:
      handoff run                                # the default matrix
      handoff run cross-process isolated-store   # two rungs
      handoff run --slow --faults                # with the slow and the fault rungs
      handoff run scenarios/cross-process.toml --store postgresql://me@db:5432/sessions"""
    from handoff.app.matrix import MatrixOptions, kept_sessions, run_matrix

    options = MatrixOptions(names or [], runs_dir or RUNS_DIR, faults=faults, slow=slow, fact=fact, topic=topic, jobs=jobs,
                            hosts=host or [], store=store, backend=backend, model=model, provider_url=provider_url,
                            api_key_env=api_key_env, spawn_workers=spawn_workers, engine=engine, keep=keep,
                            json_path=json_path, html_path=html_path)
    with run_failures():
        done = run_matrix(options, typer.echo, note)
    typer.echo("\n" + terminal.body(done.record, done.judgement, wide))  # after the plan: as `handoff report` prints it
    note("\n" + fit.paragraph(done.stored_as()))
    write_outputs(done.record, done.judgement, json_path, html_path, note)
    if said := kept_sessions(done, store):
        note(said)
    raise typer.Exit(done.judgement.exit_code())


def skew(
    runtime: Annotated[Optional[list[str]], typer.Option(
        "--runtime", metavar="VERSION", help="A runtime version the grid spans (repeat it; default: every installed one).")] = None,
    sdk: Annotated[Optional[list[str]], typer.Option(
        "--sdk", metavar="VERSION", help="An SDK version the grid spans (repeat it; default: every installed one).")] = None,
    fact: FactOption = DEFAULT_VALUE,
    topic: TopicOption = DEFAULT_TOPIC,
    jobs: Annotated[int, typer.Option(min=1, help="Cells run at once.")] = os.cpu_count() or 1,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Also write the run's record and judgement here.")] = None,
    runs_dir: RunsDirOption = None,
    backend: Annotated[str, typer.Option(
        help="The witness as the GitHub Copilot API (witness: the lab's path) or as a BYOK provider "
             "(witness-byok).")] = "witness",
) -> None:
    """Resume across versions: a grid of verdicts, created-by rows × resumed-by columns.

    For every pair of installed runtime/SDK versions (install them with `make runtimes`), one
    process creates a session, tells the fact and closes; a new process on the other pair
    resumes it from the same home and asks. Exits 0 when every cell is what
    scenarios/skew/expected.toml expects. Stored as a run (`handoff report`, `handoff diff`)."""
    from handoff.app.grid import run_grid

    with run_failures():
        done = run_grid(runtime or [], sdk or [], fact, topic, jobs, runs_dir or RUNS_DIR, json_path, note, backend)
    typer.echo(formats.rendered(done.record, done.judgement, "table"))
    note("\n" + fit.paragraph(done.stored_as()))
    write_outputs(done.record, done.judgement, json_path, None, note)
    raise typer.Exit(done.judgement.exit_code())


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
    fact: FactOption = DEFAULT_VALUE,
    topic: TopicOption = DEFAULT_TOPIC,
    show_calls: Annotated[bool, typer.Option(
        "--show-calls", help="Beside each turn, the SDK call that made it and the pid and host of the process that "
                             "called; with --resume, the process that created the session (from the stored runs).")] = False,
    resume_forms: Annotated[bool, typer.Option(
        "--resume-forms", help="After the metadata, resume the session once by each of the lab's three "
                               "resume_session call forms, as it writes them, ask, and say what each did.")] = False,
    sdk: Annotated[Optional[str], typer.Option(
        metavar="VERSION", help="Run the lab's process on another installed Python SDK (`make runtimes`), with the "
                                "runtime that SDK pins: 1.0.9 is the lab's own (runtime 1.0.78).")] = None,
    html_path: HtmlOption = None,
    runs_dir: RunsDirOption = None,
) -> None:
    """Lab 05 ("sessions"): the lab's transcript on the real runtime, stored as a run.

    Exit codes: 0 the resumed session named the fact, 1 it did not, 2 bad input or
    configuration (unknown id, no token, a refused key), 3 something else failed,
    130 interrupted.

    Examples:
      handoff lab                                # offline: the witness, as the Copilot API
      handoff lab --backend copilot              # the GitHub Copilot service (a GitHub token)
      handoff lab --session-id analyst-demo      # then, as a second process:
      handoff lab --resume analyst-demo
      handoff lab --sdk 1.0.9                    # the lab's own SDK, with its runtime 1.0.78"""
    from handoff.app.lab import lab_options, run_and_keep
    from handoff.lab.options import LabFailure

    try:
        runs_dir = runs_dir or RUNS_DIR
        options = lab_options(backend, model, provider_url, api_key_env, fact, topic, home, html_path, runs_dir,
                              session_id=session_id, resume=resume, resume_most_recent=resume_most_recent,
                              third_turn=third_turn, show_calls=show_calls, resume_forms=resume_forms)
        code, kept = run_and_keep(options, runs_dir, html_path, typer.echo, note, sdk)
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    except LabFailure as error:
        raise fail(str(error), ExitCode.TOOL_FAILED)
    except KeyboardInterrupt:
        raise fail("interrupted; the witness model and the runtime were stopped", ExitCode.INTERRUPTED)
    if kept and code == 0:  # after the transcript, which keeps the lab's own shape: what it proved, on stderr
        second = bool(resume or resume_most_recent)  # (a lab that did not show it kept has said why already)
        note("\n" + fit.fill(lab_sentence(kept.judgement, second), 100))
    raise typer.Exit(code)
