"""The `handoff` command. Thin on purpose: parse, call, print, choose the exit code.

Exit codes (handoff.checker.verdicts.ExitCode): 0 every verdict as its scenario expects;
1 some verdict contradicted its expectation; 2 bad input (the message says what and how
to fix it); 3 the tool itself failed; 4 nothing contradicted, but some turns could not
be judged (unknown, crashed) or nothing was judged at all; 130 interrupted.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Annotated, Optional
from urllib.parse import urlsplit

import typer

from handoff import inputs
from handoff import scenario as scenarios
from handoff.checker.verdicts import ExitCode
from handoff.errors import UserError
from handoff.fact import DEFAULT_TOPIC, DEFAULT_VALUE
from handoff.hosts.ssh import SshTarget
from handoff.printable import printed_as_text
from handoff.report import formats
from handoff.report.sessions import home_sessions_table, run_sessions_table, sessions_table
from handoff.report.summary import lab_sentence
from handoff.words import Command, StoreKind

EXIT_CODES = ("Exit codes: 0 every verdict as expected; 1 some verdict contradicted its expectation; 2 bad input; "
              "3 the tool itself failed; 4 nothing contradicted, but some turns could not be judged (unknown, "
              "crashed) or none were; 130 interrupted.")
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help=f"Measure what Copilot SDK session persistence keeps.\n\n{EXIT_CODES}")


@app.callback()
def _text_only(context: typer.Context) -> None:
    # Whatever a command prints shows control characters from scenario and run text
    # escaped (handoff/printable.py), for every command, through one door.
    context.with_resource(printed_as_text())


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


EngineOption = Annotated[str, typer.Option(
    "--engine", help="The container engine for container hosts: podman, or docker (needs a reachable Docker daemon).")]


RunsDirOption = Annotated[Optional[Path], typer.Option(
    "--runs-dir", metavar="DIR", envvar="HANDOFF_RUNS_DIR",
    help="Where runs are stored (default: .state/runs in this project).")]
# How a run is shown, shared by `run`, `report` and `lab`.
FormatOption = Annotated[str, typer.Option("--format", help="table, markdown, json or html.")]
WideOption = Annotated[bool, typer.Option(
    "--wide", help="Every column of every turn (tell rows too) and each scenario's full explanation, instead of "
                   "the learner's table that fits 100 columns.")]
HtmlOption = Annotated[Optional[Path], typer.Option(
    "--html", metavar="PATH", help="Also write the HTML report here: one self-contained file with a sequence "
                                   "diagram per scenario.")]


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@app.command()
def run(
    names: list[str] = typer.Argument(None, metavar="[SCENARIO]...", help="Scenario names (default: all)."),
    fact: str = typer.Option(DEFAULT_VALUE, help="The value the model is asked to remember."),
    topic: str = typer.Option(DEFAULT_TOPIC, help="What the value is a favourite of."),
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
                                         "fills or corrupts; README, Faults) instead of the ladder.")] = False,
) -> None:
    """Run scenarios and print the table of which turns kept the context.

    The fact and the plan come first, progress goes to stderr while it runs (one line per
    finished scenario when stderr is not a terminal), then the table, one line per rung
    saying what it proved and what it did not, and a summary. The run is stored under
    .state/runs/ (`handoff runs`, `handoff report`, `handoff diff`)."""
    from handoff import backends
    from handoff.coordinator import runner
    from handoff.coordinator.services import RunSettings
    from handoff.checker.checks import judge
    from handoff.report import terminal
    from handoff.report.progress import Progress
    from handoff.runs import costs
    from handoff.runs import store as runs
    from handoff.stores.database import redacted

    runs_dir = runs_dir or runs.RUNS_DIR
    with _run_failures():
        chosen_backend = backends.choose(backend, model, provider_url, api_key_env)
        the_fact = inputs.fact(fact, topic)
        if faults and names:
            raise UserError("--faults runs the fault scenarios; name scenarios without it, or give --faults alone")
        chosen = scenarios.tagged("faults") if faults else scenarios.select(names or [])
        remote = _remote_hosts(host or [], chosen)
        if store is not None:
            inputs.network_url(store, "--store", ("postgres", "postgresql"), "postgresql://user@host:5432/db",
                               needs_host=False)
        for path, option in ((json_path, "--json"), (html_path, "--html")):
            if path is not None:
                inputs.writable_file(path, option)
        if keep is not None:
            inputs.fresh_directory(keep, "--keep")
        inputs.writable_directory(runs_dir, "--runs-dir")
        inputs.engine(engine)
        jobs = _jobs_for_memory(jobs, chosen)
        _remove_leftovers(quiet=False)
        plan = terminal.plan(the_fact, len(chosen), jobs, chosen_backend)
        with Progress(chosen, the_fact, chosen_backend, on_start=lambda: typer.echo(plan)) as progress:
            settings = RunSettings(fact=the_fact, jobs=jobs, backend=chosen_backend, remote_hosts=remote,
                                               store_url=store, fork_workers=not spawn_workers, engine=engine,
                                               observer=progress, measured_seconds=costs.load(runs_dir))
            record = runner.run(chosen, settings, keep)
    stored = runs.save(record, runs_dir)
    costs.update(runs_dir, record)
    judgement = judge(record)
    typer.echo("\n" + terminal.body(record, judgement, wide))  # after the plan: as `handoff report` prints it
    typer.echo(f"\nStored as {record.id} ({stored}): `handoff report {record.id}` shows it again.", err=True)
    if json_path is not None:
        _write_atomically(json_path, formats.as_json(record, judgement))
    if html_path is not None:
        _write_html(html_path, record, judgement)
    if store is not None and any(s.scenario.store == StoreKind.POSTGRES and s.steps for s in record.scenarios):
        tag = record.id.rsplit("-", 1)[-1]
        shown = redacted(store)  # a command to copy, unless it would carry the password
        command = f"`handoff sessions list --store '{store}'`" if shown == store else \
            "`handoff sessions list --store` with the URL you gave"
        typer.echo(f"The database scenarios' sessions are kept on {shown} (schemas handoff_{tag}_*): {command} "
                   f"lists them.", err=True)
    raise typer.Exit(judgement.exit_code())


@app.command()
def skew(
    runtime: Annotated[Optional[list[str]], typer.Option(
        "--runtime", metavar="VERSION", help="A runtime version the grid spans (repeat it; default: every installed one).")] = None,
    sdk: Annotated[Optional[list[str]], typer.Option(
        "--sdk", metavar="VERSION", help="An SDK version the grid spans (repeat it; default: every installed one).")] = None,
    fact: Annotated[str, typer.Option(help="The value the model is asked to remember.")] = DEFAULT_VALUE,
    topic: Annotated[str, typer.Option(help="What the value is a favourite of.")] = DEFAULT_TOPIC,
    jobs: Annotated[int, typer.Option(min=1, help="Cells run at once.")] = os.cpu_count() or 1,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Also write the run's record and judgement here.")] = None,
    runs_dir: RunsDirOption = None,
) -> None:
    """Resume across versions: a grid of verdicts, created-by rows × resumed-by columns.

    For every pair of installed runtime/SDK versions (install them with `make runtimes`), one
    process creates a session, tells the fact and closes; a new process on the other pair
    resumes it from the same home and asks. Exits 0 when every cell is what
    scenarios/skew/expected.toml expects. Stored as a run (`handoff report`, `handoff diff`)."""
    from handoff.coordinator import runner
    from handoff.coordinator.services import RunSettings
    from handoff.skew import grid
    from handoff.checker.checks import judge
    from handoff.runs import store as runs

    runs_dir = runs_dir or runs.RUNS_DIR
    with _run_failures():
        the_fact = inputs.fact(fact, topic)
        runtimes, sdks = grid.chosen_versions(runtime or [], sdk or [])
        cells = grid.plan(grid.pairs(runtimes, sdks))
        if json_path is not None:
            inputs.writable_file(json_path, "--json")
        inputs.writable_directory(runs_dir, "--runs-dir")
        jobs = _jobs_for_memory(jobs, cells)
        _remove_leftovers(quiet=False)
        typer.echo(f"{len(cells)} cells: runtime {', '.join(runtimes)} × SDK {', '.join(sdks)}, both ways, "
                   f"{jobs} at a time ...", err=True)
        record = runner.run(cells, RunSettings(fact=the_fact, jobs=jobs), command=Command.SKEW)
    stored = runs.save(record, runs_dir)
    judgement = judge(record)
    typer.echo(formats.rendered(record, judgement, "table"))
    typer.echo(f"\nStored as {record.id} ({stored}): `handoff report {record.id}` shows it again.", err=True)
    if json_path is not None:
        _write_atomically(json_path, formats.as_json(record, judgement))
    raise typer.Exit(judgement.exit_code())


def _write_html(path: Path, record, judgement) -> None:
    _write_atomically(path, formats.rendered(record, judgement, "html").encode())
    typer.echo(f"HTML report: {path} (one file; open it in a browser, e.g. file://{path.absolute()})", err=True)


@contextlib.contextmanager
def _run_failures():
    """What ends a run early, as its exit code: bad input 2, the tool failing 3, Ctrl-C
    130 (saying truly whether everything was removed)."""
    from handoff.coordinator.services import CoordinatorError

    try:
        yield
    except UserError as error:
        raise _fail(str(error), ExitCode.BAD_INPUT)
    except CoordinatorError as error:
        raise _fail(str(error), ExitCode.TOOL_FAILED)
    except KeyboardInterrupt:
        raise _fail(_after_interrupt(), ExitCode.INTERRUPTED)


def _after_interrupt() -> str:
    """What an interrupted run says, having checked that it is true."""
    from handoff import leftovers

    left = leftovers.find(of=os.getpid())
    if not left:
        return "interrupted; every worker, runtime and temporary file was removed"
    return f"interrupted; could not remove {leftovers.describe(left)}: run `handoff clean`"


def _remove_leftovers(quiet: bool) -> list:
    """Remove what killed runs left behind (their owners are gone); say so unless quiet."""
    from handoff import leftovers

    found = leftovers.find()
    if not found:
        return []
    failed = leftovers.remove(found)
    if not quiet:
        typer.echo(f"note: removed what a killed run left behind: {leftovers.describe(found)}", err=True)
    for problem in failed:
        typer.echo(f"warning: could not remove {problem}", err=True)
    return found


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
        if url.startswith("podman+ssh://"):
            raise UserError(f"--host {option}: a remote container engine is not supported (README, Containers, says "
                            f"why); --host {name}=ssh://user@machine runs the step on that machine without a container")
        if name not in known:
            raise UserError(f"--host {name}: no selected scenario has a host named {name!r} (hosts: {', '.join(sorted(known)) or 'none'})")
        remote[name] = SshTarget.parse(name, url)
    return remote


@app.command("list")
def list_scenarios() -> None:
    """List the scenarios in the default matrix, in ladder order, then the fault scenarios."""
    try:
        loaded, faults = scenarios.select([]), scenarios.tagged("faults")
    except UserError as error:
        raise _fail(str(error), 2)
    width = max((len(item.name) for item in loaded + faults), default=0) + 2
    for item in loaded:
        typer.echo(f"{item.name:{width}}{item.title}")
    if faults:
        typer.echo("\nFault scenarios (handoff run --faults):")
        for item in faults:
            typer.echo(f"{item.name:{width}}{item.title}")


@app.command("runs")
def list_runs(limit: Annotated[int, typer.Option(min=1, help="Show at most this many, newest last.")] = 20,
              runs_dir: RunsDirOption = None) -> None:
    """List stored runs: when, which scenarios, how they came out, on which versions."""
    from handoff.report.listing import runs_table
    from handoff.runs.store import RUNS_DIR

    typer.echo(runs_table(limit, runs_dir or RUNS_DIR))




@app.command("report")
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
    """Judge a stored run again, from its raw events, with this version's checker, and print it
    (as the run printed it) or write it (-o), e.g. `handoff report --format html -o report.html`.

    Exits as `handoff run` would for that judgement."""
    from handoff.checker.checks import judge
    from handoff.runs import store as runs

    try:
        if form not in formats.FORMATS:
            raise UserError(f"--format {form}: choose one of {', '.join(formats.FORMATS)}")
        if kind not in tuple(Command):
            raise UserError(f"--kind {kind}: choose one of {', '.join(Command)}")
        if output is not None:
            inputs.writable_file(output, "--output")
        record = runs.load(run_ref, runs_dir or runs.RUNS_DIR, command=kind).record
    except UserError as error:
        raise _fail(str(error), ExitCode.BAD_INPUT)
    judgement = judge(record)
    if output is None:
        typer.echo(formats.rendered(record, judgement, form, wide))
    elif form == "html":
        _write_html(output, record, judgement)
    else:
        _write_atomically(output, (formats.rendered(record, judgement, form, wide) + "\n").encode())
    raise typer.Exit(judgement.exit_code())


@app.command("diff")
def diff_runs(
    before: Annotated[str, typer.Argument(metavar="RUN_A")],
    after: Annotated[str, typer.Argument(metavar="RUN_B")],
    runs_dir: RunsDirOption = None,
) -> None:
    """The turns whose verdict or evidence differ between two stored runs (exit 0 when none do, 1 when some do)."""
    from handoff.checker.checks import judge
    from handoff.report import diff
    from handoff.runs import store as runs

    try:
        root = runs_dir or runs.RUNS_DIR
        old, new = judge(runs.load(before, root).record), judge(runs.load(after, root).record)
    except UserError as error:
        raise _fail(str(error), ExitCode.BAD_INPUT)
    typer.echo(diff.render(old, new))
    raise typer.Exit(1 if diff.differences(old, new) else 0)


def _write_atomically(path: Path, data: bytes) -> None:
    """A reader never sees a half-written file. The temporary file beside it is a new one
    of a name nobody can guess (made with O_EXCL: a link placed there is never followed),
    and is gone whatever happens; only the path the user named is replaced."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent or ".")
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


sessions_app = typer.Typer(help="The sessions in a Copilot home, a stored run or a database store.")
app.add_typer(sessions_app, name="sessions")


@sessions_app.command("list")
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
    runs_dir: RunsDirOption = None,
) -> None:
    """List sessions, most recent first, from what you have: a Copilot home (read from
    its session-state/ files, without starting a runtime), a stored run (from its record)
    or a database store (its session registry: discovery that works on every host that
    reaches the database, unlike the runtime's own list_sessions; on a PostgreSQL server
    also the sessions each `handoff run --store URL` kept there). Without WHERE, the
    lab's home."""
    from handoff import places
    from handoff.lab import options as lab_options
    from handoff.runs.store import RUNS_DIR

    if where is not None and store is not None:
        raise _fail("give WHERE or --store, not both: --store URL is the same as WHERE", ExitCode.BAD_INPUT)
    try:
        place = places.locate(where if where is not None else store, lab_options.DEFAULT_HOME, runs_dir or RUNS_DIR)
        if isinstance(place, places.Store):
            text = _store_listing(place.url, owner)
        elif owner is not None:
            if not isinstance(place, places.Run):
                raise UserError("--owner: a Copilot home records no owner (a store's registry and a run's steps do); "
                                "leave --owner out")
            text = _run_listing(place.found, owner)
        elif isinstance(place, places.Run):
            text = _run_listing(place.found, None)
        elif isinstance(place, places.Homes):
            text = "\n\n".join([f"{place.path} holds {_count(len(place.homes), 'Copilot home')} (as `handoff run "
                                 f"--keep` leaves them):"] + [_home_listing(home) for home in place.homes])
        else:
            text = _home_listing(place.path, place.default)
    except UserError as error:
        raise _fail(str(error), ExitCode.BAD_INPUT)
    typer.echo(text)


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}" + ("" if number == 1 else "s")


def _home_listing(home: Path, default: bool = False) -> str:
    """A Copilot home's sessions under a first line that says which home was read."""
    import shlex

    from handoff.eventlog import SESSION_STATE
    from handoff.stores.homes import home_sessions, is_home

    if default and not is_home(home):
        return (f"The lab's home, {home}, holds no sessions yet: `handoff lab` makes one there. To list others: "
                f"`handoff sessions list WHERE`, WHERE a Copilot home (e.g. ~/.copilot), a run (`handoff runs`) or "
                f"a store.")
    try:
        found = home_sessions(home)
    except OSError as error:
        raise UserError(f"cannot list {home / SESSION_STATE}: {error.strerror or error}") from None
    said = f"{_count(len(found), 'session')}, read from its {SESSION_STATE}/ without starting a runtime"
    if not found:
        said = f"no sessions in its {SESSION_STATE}/"
    if default:
        first = (f"The lab's home, {home} (the default; `handoff sessions list WHERE` lists another home, a run or a "
                 f"store): {said}")
    else:
        first = f"Copilot home {shlex.quote(str(home))}: {said}"
    return first + (f"\n{home_sessions_table(found)}" if found else "")


def _run_listing(found, owner: str | None) -> str:
    """A stored run's sessions, from its record, and where their files are now."""
    import shlex
    from datetime import datetime

    from handoff.runs.sessions import homes_still_there, run_sessions

    record = found.record
    sessions = run_sessions(record, owner)
    began = datetime.fromtimestamp(record.started_at).strftime("%Y-%m-%d %H:%M:%S")
    first = f"Run {record.id} (`handoff {record.command}`, {began}): "
    if not sessions:
        return first + ("no step acting as that owner used a session" if owner else "its steps used no session")
    lines = [first + f"{_count(len(sessions), 'session')} its steps used, from its record ({found.path})",
             run_sessions_table(sessions)]
    kept = homes_still_there(sessions)
    for home in kept:
        lines.append(f"Their files are still in {home}: `handoff sessions list {shlex.quote(str(home))}` reads them.")
    used = list(dict.fromkeys(home for s in sessions for home in s.home_dirs))
    if not kept and record.command == Command.LAB and used:
        lines.append(f"The home it used, {', '.join(used)}, holds no session-state/ any more." if len(used) == 1 else
                     f"The homes it used, {', '.join(used)}, hold no session-state/ any more.")
    elif not kept and any(s.store != StoreKind.POSTGRES for s in sessions):
        lines.append("Their files were in the run's own homes and stores, removed when it ended (`handoff run --keep "
                     "DIR` keeps the homes; `handoff sessions list DIR` reads them).")
    if record.options.store and any(s.store == StoreKind.POSTGRES for s in sessions):
        lines.append(f"Its database scenarios' sessions are kept on {record.options.store}: `handoff sessions list` "
                     f"with the URL you gave lists them.")
    elif any(s.store == StoreKind.POSTGRES for s in sessions):
        lines.append("Its database scenarios' sessions were in the run's throwaway PostgreSQL, deleted when it ended.")
    return "\n".join(lines)


def _store_listing(url: str, owner: str | None) -> str:
    from handoff import places
    from handoff.stores.database import redacted

    found = places.registries(url, owner)
    return f"The session registry in {redacted(url)}:\n{sessions_table(found)}"


@app.command()
def witness(
    port: int = typer.Option(0, min=0, max=65535, help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    evidence: Optional[Path] = typer.Option(None, help="Append a JSON line per request to this file."),
) -> None:
    """Run the witness model standalone (an OpenAI-compatible endpoint)."""
    from handoff.witness.__main__ import serve

    if evidence is not None:
        try:
            inputs.writable_file(evidence, "--evidence")
        except UserError as error:
            raise _fail(str(error), ExitCode.BAD_INPUT)
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
    show_calls: Annotated[bool, typer.Option(
        "--show-calls", help="Beside each turn, the SDK call that made it and the pid and host of the process that "
                             "called; with --resume, the process that created the session (from the stored runs).")] = False,
    html_path: HtmlOption = None,
    runs_dir: RunsDirOption = None,
) -> None:
    """Lab 05 ("sessions"): the lab's transcript on the real runtime (stored as a run, like `handoff run`).

    Exit codes: 0 the resumed session named the fact, 1 it did not, 2 bad input or
    configuration (unknown id, no token, a refused key), 3 something else failed,
    130 interrupted."""
    from handoff import backends
    from handoff.lab.options import DEFAULT_HOME, LabFailure, LabOptions
    from handoff.lab.runner import run_lab
    from handoff.checker.checks import judge
    from handoff.lab.calls import created_by
    from handoff.runs import store as runs

    root = runs_dir or runs.RUNS_DIR

    kept = []

    def keep(record) -> None:
        runs.save(record, root)
        kept.append(record)
        if html_path is not None:
            _write_html(html_path, record, judge(record))

    try:
        chosen = backends.choose(backend, model, provider_url, api_key_env)
        if html_path is not None:
            inputs.writable_file(html_path, "--html")
        options = LabOptions(chosen, inputs.fact(fact, topic), home or DEFAULT_HOME, session_id, resume,
                                  resume_most_recent, third_turn, show_calls)
        code = run_lab(options, typer.echo, lambda line: typer.echo(line, err=True), keep=keep,
                            creator=lambda sid: created_by(sid, runs.records(root, command=Command.LAB)))
    except UserError as error:
        raise _fail(str(error), 2)
    except LabFailure as error:
        raise _fail(str(error), 3)
    except KeyboardInterrupt:
        raise _fail("interrupted; the witness model and the runtime were stopped", 130)
    if kept and code == 0:  # after the transcript, which keeps the lab's own shape: what it proved, on stderr
        second = bool(resume or resume_most_recent)  # (a lab that did not show it kept has said why already)
        typer.echo("\n" + textwrap.fill(lab_sentence(judge(kept[-1]), second), 100), err=True)
    raise typer.Exit(code)


export_app = typer.Typer(help="What a scenario becomes elsewhere.")
app.add_typer(export_app, name="export")


@export_app.command("k8s")
def export_k8s(
    name: Annotated[str, typer.Argument(metavar="SCENARIO", help="A scenario name or .toml file.")],
    image: Annotated[str, typer.Option(help="The image the cluster pulls: the Containerfile's standalone target, "
                                       "pushed to your registry.")] = "registry.example/copilot-handoff:standalone",
    store: Annotated[Optional[str], typer.Option(metavar="postgresql://user:password@host:5432/db",
                                                 help="The cluster's PostgreSQL, for a postgres scenario.")] = None,
    fact: Annotated[str, typer.Option(help="The value the model is asked to remember.")] = DEFAULT_VALUE,
    topic: Annotated[str, typer.Option(help="What the value is a favourite of.")] = DEFAULT_TOPIC,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
) -> None:
    """Kubernetes manifests for a scenario: a Job per step, a witness Deployment and Service,
    the shared home as a claim or the session files in PostgreSQL. Nothing is applied."""
    from handoff.export import k8s

    try:
        [chosen] = scenarios.select([name])
        if store is not None:
            inputs.network_url(store, "--store", ("postgres", "postgresql"), "postgresql://user@host:5432/db")
        if output is not None:
            inputs.writable_file(output, "--output")
        text = k8s.render(chosen, k8s.manifests(chosen, image, inputs.fact(fact, topic), store), str(output or "FILE"))
    except UserError as error:
        raise _fail(str(error), ExitCode.BAD_INPUT)
    if output is None:
        typer.echo(text, nl=False)
    else:
        _write_atomically(output, text.encode())


image_app = typer.Typer(help="The worker image container hosts run in (see the Containerfile).")
app.add_typer(image_app, name="image")


@image_app.command("build")
def image_build(engine: EngineOption = "podman") -> None:
    """Build the worker image if this machine does not have it yet (once per machine;
    offline: debootstrap from Debian's packages, then an import). `make containers` runs this."""
    from handoff.containers import building

    try:
        inputs.engine(engine)
        tag = building.build(engine, lambda line: typer.echo(line, err=True))
    except UserError as error:
        raise _fail(str(error), ExitCode.BAD_INPUT)
    except building.BuildFailed as error:
        raise _fail(str(error), ExitCode.TOOL_FAILED)
    except KeyboardInterrupt:
        raise _fail("interrupted; nothing half-built was kept", ExitCode.INTERRUPTED)
    typer.echo(tag)


@image_app.command("tag")
def image_tag() -> None:
    """Print the worker image's tag (a hash of the Containerfile), e.g. for `podman build -t`."""
    from handoff.containers import image

    try:
        typer.echo(image.recipe().tag)
    except image.ImageError as error:
        raise _fail(str(error), ExitCode.BAD_INPUT)


@app.command()
def clean() -> None:
    """Remove what runs that were killed (kill -9, a lost terminal) left behind: their
    processes, containers, volumes, container networks, network namespaces, links, run
    directories and database servers. Runs still going are left alone."""
    from handoff import leftovers

    found = leftovers.find()
    for leftover in found:
        typer.echo(f"removing {leftover.kind} {leftover.name} (its run, pid {leftover.owner}, is gone)")
    failed = leftovers.remove(found)
    for problem in failed:
        typer.echo(f"could not remove {problem}", err=True)
    typer.echo(f"removed {leftovers.describe(found)}" if found else "nothing left behind by earlier runs")
    raise typer.Exit(1 if failed else 0)


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
