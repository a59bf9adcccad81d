"""The worker image: what it is (the project's ``Containerfile``) and how it is made here.

The ``worker`` stage of the Containerfile is the single description. Where a registry is
reachable, ``podman build --target worker`` makes it. This machine reaches only Debian's
package mirror, so the tool makes the same image offline: ``debootstrap`` of the
Containerfile's Debian suite with its ``PACKAGES`` (a minimal root file system), a
tarball of it, and ``import`` into the engine with the stage's LABEL/ENV/WORKDIR/CMD
lines as the image's settings.

The image's tag is a hash of the Containerfile and of this builder's steps, so an edit
makes a new image and an unchanged file is built once per machine: the engine keeps the
image, and the tarball stays under ``.state/containers/`` (an engine reset then costs an
import, seconds, not a debootstrap, a minute or two). Two builders never race: a lock
file serialises them, and the second finds the image the first made.

The image holds only the operating system and Python; the code, the Python packages and
the runtime are mounted from this machine when a container starts (hosts/container.py),
so a code change needs no rebuild.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from handoff import owners
from handoff.containers.engine import STATE, Engine, EngineError
from handoff.processes import ProcessTracker
from handoff.runtime_locator import PROJECT_ROOT

CONTAINERFILE = PROJECT_ROOT / "Containerfile"
REPOSITORY = "localhost/copilot-handoff-worker"
STAGE = "worker"
BUILDER = "debootstrap-minbase-1"  # part of the tag: change it when the offline steps below change
DEFAULT_MIRROR = "http://deb.debian.org/debian"
IMPORTABLE = ("CMD", "ENTRYPOINT", "ENV", "EXPOSE", "LABEL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR")
PYTHON_LABEL = "io.copilot-handoff.python"
BUILD_TIMEOUT = 1200.0


class ImageError(RuntimeError):
    """The image could not be made; the message says which step failed and why."""


@dataclass(frozen=True)
class Recipe:
    suite: str  # the Debian release, e.g. bookworm
    packages: tuple[str, ...]
    settings: tuple[str, ...]  # the worker stage's LABEL/ENV/WORKDIR/CMD lines, as written
    python: str  # the Python the image brings, e.g. 3.11
    digest: str

    @property
    def tag(self) -> str:
        return f"{REPOSITORY}:{self.digest[:12]}"


def recipe(path: Path = CONTAINERFILE) -> Recipe:
    """The worker stage of a Containerfile, as the offline builder needs it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ImageError(f"{path}: cannot read: {error.strerror}") from None
    joined = re.sub(r"\\\n", " ", text)  # continuation lines
    base = re.search(r"^ARG BASE_IMAGE=\S*debian:(?P<suite>[a-z]+)", joined, re.M)
    stage = re.search(rf"^FROM \S+ AS {STAGE}\s*$(?P<body>.*?)(?=^FROM |\Z)", joined, re.M | re.S)
    if not base or not stage:
        raise ImageError(f"{path}: expected `ARG BASE_IMAGE=...debian:<suite>...` and a `FROM ... AS {STAGE}` stage")
    body = stage.group("body")
    packages = re.search(r'^ARG PACKAGES="(?P<list>[^"]+)"', body, re.M)
    python = re.search(rf'^LABEL {re.escape(PYTHON_LABEL)}="(?P<version>[\d.]+)"', body, re.M)
    if not packages or not python:
        raise ImageError(f'{path}: the {STAGE} stage needs `ARG PACKAGES="..."` and `LABEL {PYTHON_LABEL}="3.X"`')
    settings = tuple(line.strip() for line in body.splitlines() if line.strip().split(" ", 1)[0] in IMPORTABLE)
    digest = hashlib.sha256(text.encode() + BUILDER.encode()).hexdigest()
    return Recipe(base.group("suite"), tuple(packages.group("list").split()), settings, python.group("version"), digest)


def python_problem(image: Recipe) -> str | None:
    """The image runs the worker with its own Python and this machine's packages (compiled
    for one Python version), so the two must agree."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if here == image.python:
        return None
    return (f"the worker image brings Python {image.python} but this venv runs Python {here}, and its compiled "
            f"packages would not load there: change PACKAGES and {PYTHON_LABEL} in the Containerfile to python{here}")


def debian_mirror(sources: Path = Path("/etc/apt")) -> str:
    """The Debian mirror this machine's apt uses (debootstrap fetches from it)."""
    texts = []
    for path in [sources / "sources.list", *sorted((sources / "sources.list.d").glob("*"))]:
        with contextlib.suppress(OSError):
            texts.append(path.read_text(errors="replace"))
    for text in texts:
        for line in text.splitlines():
            one_line = re.match(r"\s*deb\s+(?:\[[^]]*]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)", line)
            if one_line and "security" not in one_line.group("uri") and "/debian" in one_line.group("uri"):
                return one_line.group("uri").rstrip("/")
            deb822 = re.match(r"\s*URIs:\s*(?P<uri>\S+)", line)
            if deb822 and "security" not in deb822.group("uri") and deb822.group("uri").rstrip("/").endswith("/debian"):
                return deb822.group("uri").rstrip("/")
    return DEFAULT_MIRROR


def present(engine: Engine, image: Recipe) -> bool:
    try:
        engine.run_sync("image", "inspect", "--format", "{{.Id}}", image.tag, timeout=30)
        return True
    except EngineError:
        return False


def build_problem() -> str | None:
    """Why this machine cannot build the image offline (None when it can)."""
    if sys.platform != "linux":
        return "the offline image build needs Linux"
    if shutil.which("debootstrap") is None:
        return "`debootstrap` is missing: install it (as root: `apt-get install debootstrap`; `make setup` does it)"
    if shutil.which("unshare") is None:
        return "`unshare` is missing: install util-linux"
    if os.geteuid() != 0:
        return "the offline image build (debootstrap) needs root; or build the Containerfile with a registry"
    return None


def tarball(image: Recipe) -> Path:
    return STATE / f"worker-{image.digest[:12]}.tar"


async def ensure(engine: Engine, tracker: ProcessTracker, progress: Callable[[str], None], image: Recipe | None = None
                 ) -> Recipe:
    """The worker image in ``engine``, built first when it is not there yet."""
    image = image or recipe()
    if present(engine, image):
        return image
    STATE.mkdir(parents=True, exist_ok=True)
    with (STATE / "build.lock").open("w") as lock:
        await _locked(lock)
        if present(engine, image):
            return image
        if not tarball(image).is_file():
            problem = build_problem()
            if problem:
                raise ImageError(f"the worker image {image.tag} is not built and cannot be here: {problem}")
            mirror = debian_mirror()
            progress(f"building the container image {image.tag} (once per machine, 1-2 minutes): "
                     f"debootstrap of Debian {image.suite} with {', '.join(image.packages)} from {mirror}")
            await _root_file_system(tracker, image, mirror)
        progress(f"importing {tarball(image).name} into {engine.name} as {image.tag}")
        changes = [argument for setting in image.settings for argument in ("--change", setting)]
        try:
            await engine.run(tracker, "import", *changes, str(tarball(image)), image.tag, timeout=BUILD_TIMEOUT)
        except EngineError as error:
            raise ImageError(str(error)) from None
    return image


async def _locked(lock) -> None:
    """Wait for another builder (a test session, a second run) to finish; polled, so that
    Ctrl-C is not held up by a thread blocked in flock."""
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            await asyncio.sleep(0.5)


async def _root_file_system(tracker: ProcessTracker, image: Recipe, mirror: str) -> None:
    """debootstrap into a directory named for this run (a killed build's is a leftover
    `handoff clean` removes), in a mount namespace of its own so that its /proc and /sys
    mounts end with it, then trim and pack it as the tarball, atomically."""
    log = STATE / "build.log"
    rootfs = owners.make_directory(f"{owners.RUN_DIR_PREFIX}{owners.tag()}-rootfs-")
    partial = tarball(image).with_suffix(".partial")
    try:
        steps = [
            ["unshare", "--mount", "--propagation", "private", "debootstrap", "--variant=minbase",
             f"--include={','.join(image.packages)}", image.suite, str(rootfs), mirror],
            ["sh", "-c", 'rm -rf "$0"/var/cache/apt/* "$0"/var/lib/apt/lists/*', str(rootfs)],
            ["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), "."],
        ]
        with log.open("wb") as output:
            for argv in steps:
                process = await tracker.spawn(*argv, stdin=asyncio.subprocess.DEVNULL, stdout=output, stderr=output)
                try:
                    code = await asyncio.wait_for(process.wait(), BUILD_TIMEOUT)
                except asyncio.TimeoutError:
                    tracker.kill_tree(process.pid)
                    code = await process.wait()
                finally:
                    tracker.forget(process.pid)
                if code != 0:
                    said = log.read_text(errors="replace").strip().splitlines()
                    raise ImageError(f"`{argv[0] if argv[0] != 'unshare' else 'debootstrap'}` failed (exit code {code}): "
                                     f"{said[-1] if said else 'no output'} (the whole log: {log})")
        partial.replace(tarball(image))
    finally:
        partial.unlink(missing_ok=True)
        shutil.rmtree(rootfs, ignore_errors=True)
