"""What the numbers were measured on: cores, memory, CPU model, versions, load, command.

The load average is recorded at the start and the end because on a 2-core machine a
concurrent test run changes every number here; a reader should see that it happened.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import psutil

from handoff.hosts.local import runtime_environment


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cores() -> int:
    """What `nproc` prints: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def runtime_version(runtime_path: Path) -> str:
    try:
        done = subprocess.run([str(runtime_path), "--no-auto-update", "--version"], capture_output=True, text=True, timeout=30,
                              env=runtime_environment())
        first = (done.stdout or done.stderr).strip().splitlines()
        return f"{first[0].rstrip('.') if first else '?'} ({runtime_path.name} in {runtime_path.parent.name})"
    except (OSError, subprocess.SubprocessError) as error:
        return f"unknown ({error})"


def _package(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"


def describe(runtime_path: Path, command: str, started: datetime, load_at_start: str) -> list[tuple[str, str]]:
    memory = psutil.virtual_memory()
    return [
        ("date (UTC)", started.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")),
        ("command", f"`{command}`"),
        ("cores (`nproc`)", str(cores())),
        ("CPU model", cpu_model()),
        ("memory", f"{memory.total / 2**30:.1f} GiB total, {memory.available / 2**30:.1f} GiB available at the end"),
        ("kernel", f"{platform.system()} {platform.release()}"),
        ("Python", sys.version.split()[0]),
        ("SDK", f"github-copilot-sdk {_package('github-copilot-sdk')}"),
        ("runtime", runtime_version(runtime_path)),
        ("load average at start", load_at_start),
        ("load average at end", load()),
    ]


def command_line() -> str:
    """The command as run; `make bench` sets MAKELEVEL for the commands it starts."""
    command = shlex.join([str(Path(sys.executable).relative_to(Path.cwd())) if Path(sys.executable).is_relative_to(Path.cwd())
                          else sys.executable, "-m", "bench", *sys.argv[1:]])
    if os.environ.get("MAKELEVEL"):
        arguments = os.environ.get("BENCH_ARGS", "")
        return f"make bench{' BENCH_ARGS=' + shlex.quote(arguments) if arguments else ''}` → `{command}"
    return command
