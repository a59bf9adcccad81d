"""The tools around the runs: the witness model standalone, a scenario as Kubernetes
manifests, the worker image, the cleanup after killed runs and the doctor."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from handoff import inputs
from handoff.app.outputs import read_by_the_tool, write_atomically
from handoff.chat.store import DEFAULT_FOLDER as DEFAULT_CHAT_STORE
from handoff.checker.verdicts import ExitCode
from handoff.commands.common import EngineOption, FactOption, TopicOption, fail, note
from handoff.errors import UserError
from handoff.fact import DEFAULT_TOPIC, DEFAULT_VALUE


def witness(
    port: int = typer.Option(0, min=0, max=65535, help="Port to listen on (0 picks a free one)."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    evidence: Optional[Path] = typer.Option(None, help="Append a JSON line per request to this file."),
) -> None:
    """Run the witness model in the foreground, for your own app.

    It answers as the GitHub Copilot API (the lab's path) and as an OpenAI-compatible BYOK
    provider, and prints the lines that point an app at it. Ctrl-C stops it and prints
    what it saw: the requests of each token's principal, and where each fact told was
    seen."""
    from handoff.app.witness import serve_for_apps

    try:
        if evidence is not None:
            inputs.writable_file(evidence, "--evidence", keep=read_by_the_tool(), appended=True)
        code = serve_for_apps(host, port, evidence)
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    raise typer.Exit(code)


def chat(
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to serve the page on (0 picks a free one).")] = 8765,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    store: Annotated[str, typer.Option(help="Where the sessions, their owners and the app's key are kept: a new "
                                       "or empty folder, or one a chat made; or a PostgreSQL URL, which several "
                                       "servers share.")] = str(DEFAULT_CHAT_STORE),
    evidence: Annotated[Optional[Path], typer.Option(help="Append a JSON line per model request to this file "
                                                     "(default: witness-evidence.jsonl in the store).")] = None,
) -> None:
    """Serve a web chat whose browser keeps only the session id.

    The lab's demo app done as its last step says: the page keeps the id of the
    conversation it shows, never the conversation; every turn resumes the session by id
    on the server, behind the guard, so another user's id is refused before the model
    hears of it. It runs on the real runtime with the witness as the Copilot API, prints
    its URL and the local users with their passwords, and serves until Ctrl-C.

    Examples:
      handoff chat
      handoff chat --port 0 --store /tmp/chat
      handoff chat --store postgresql://chat@db.example:5432/chat"""
    from handoff.app.chat import ChatOptions, serve_chat

    try:
        if evidence is not None:
            inputs.writable_file(evidence, "--evidence", keep=read_by_the_tool(), appended=True)
        code = serve_chat(ChatOptions(host, port, store, evidence), typer.echo)
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    raise typer.Exit(code)


def conform(
    factory: Annotated[str, typer.Argument(metavar="MODULE:FACTORY", help="What your app passes to the SDK as "
                                           "create_session_fs_handler, importable from here or PYTHONPATH.")],
) -> None:
    """Judge your own SessionFs provider: does it keep the contract the runtime needs?

    The contract rows call the provider through the SDK's own adapter, as the runtime's
    requests reach it: round trips (empty, large, multi-byte), appends, a missing path's
    ENOENT, mkdir, readdir, rm, rename, stat. The persistence rows run the real runtime
    on it: a session resumed in the same process, and in a new process whose home is its
    own. Exits 0 when every required row holds, 1 when one does not, 2 when MODULE:FACTORY
    is no such factory.

    Examples:
      handoff conform examples.files_provider:factory
      handoff conform myapp.sessions:make_provider"""
    from handoff.conform.suite import validate
    from handoff.conform.loading import factory_named
    from handoff.report.conformance import rendered

    try:
        made = factory_named(factory)
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    report = validate(made, spec=factory)
    typer.echo(rendered(report))
    raise typer.Exit(report.exit_code)


def export_k8s(
    name: Annotated[str, typer.Argument(metavar="SCENARIO", help="A scenario name or .toml file.")],
    image: Annotated[str, typer.Option(help="The image the cluster pulls: the Containerfile's standalone target, "
                                       "pushed to your registry.")] = "registry.example/copilot-handoff:standalone",
    store: Annotated[Optional[str], typer.Option(metavar="postgresql://user:password@host:5432/db",
                                                 help="The cluster's PostgreSQL, for a postgres scenario.")] = None,
    fact: FactOption = DEFAULT_VALUE,
    topic: TopicOption = DEFAULT_TOPIC,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
    backend: Annotated[str, typer.Option(
        help="The witness as the GitHub Copilot API (witness: the lab's path, a token per step) or as a BYOK "
             "provider (witness-byok).")] = "witness",
) -> None:
    """Kubernetes manifests for a scenario; nothing is applied.

    A Job per step, a witness Deployment and Service, and the shared home as a claim or
    the session files in PostgreSQL. On the Copilot API's path each step's Secret holds a
    token of its own, and the witness reads them all from a Secret of its own.

    Examples:
      handoff export k8s cross-process > cross-process.yaml
      handoff export k8s cross-process --backend witness-byok -o byok.yaml"""
    from handoff.app.export import k8s_manifests

    try:
        text = k8s_manifests(name, image, store, fact, topic, output, backend)
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_atomically(output, text.encode())


def image_build(engine: EngineOption = "podman") -> None:
    """Build the worker image, if this machine does not have it yet.

    Once per machine, offline: debootstrap from Debian's packages, then an import. `make
    containers` runs this."""
    from handoff.containers import building

    try:
        inputs.engine(engine)
        tag = building.build(engine, lambda line: typer.echo(line, err=True))
    except UserError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)
    except building.BuildFailed as error:
        raise fail(str(error), ExitCode.TOOL_FAILED)
    except KeyboardInterrupt:
        raise fail("interrupted; nothing half-built was kept", ExitCode.INTERRUPTED)
    typer.echo(tag)


def image_tag() -> None:
    """Print the worker image's tag (a hash of the Containerfile), e.g. for `podman build -t`."""
    from handoff.containers import image

    try:
        typer.echo(image.recipe().tag)
    except image.ImageError as error:
        raise fail(str(error), ExitCode.BAD_INPUT)


def clean(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be removed and what is left alone, "
                                          "and remove nothing.")] = False,
) -> None:
    """Remove what killed runs of this tool left behind.

    Their processes, containers, volumes, container networks, network namespaces, links,
    run directories and database servers (kill -9, a lost terminal). Only what a run of
    this tool, as this user, wrote down in its ledger before making it is removed, once
    that run is gone. Runs still going, and whatever merely has a name like the tool's,
    are left alone; --dry-run lists both.

    Examples:
      handoff clean --dry-run"""
    from handoff.app.cleanup import clean_up

    raise typer.Exit(0 if clean_up(typer.echo, note, dry_run=dry_run) else 1)


def doctor() -> None:
    """What is ready and what is missing (run this first when something fails).

    Exit code 0 when the default matrix can run, 1 when a line marked FAIL must be fixed."""
    from handoff import doctor as checks

    sections = checks.diagnose()
    typer.echo(checks.render(sections))
    raise typer.Exit(0 if checks.ready(sections) else 1)
