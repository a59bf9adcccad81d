"""End-to-end fixtures: the real runtime, the real witness over HTTP, real processes.

The default matrix is run once per test session (it is the expensive part) and the
tests then read its results; the same matrix runs a second time with another fact to
show that nothing depends on the default value.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from handoff import runner, scenario
from handoff.fact import Fact
from handoff.hosts.base import USER_DIRS
from handoff.runtime_locator import PROJECT_ROOT, locate_runtime

OTHER_FACT = Fact("Champions", "customer tier")


def handoff_processes() -> list[psutil.Process]:
    """Workers, witnesses and runtimes started by this checkout's tool that still run."""
    runtime = str(locate_runtime())
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "exe", "status"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if process.info["status"] == psutil.STATUS_ZOMBIE or process.pid == os.getpid():
            continue
        ours = str(PROJECT_ROOT) in cmdline  # this checkout's venv or runtime, not another checkout's
        if (ours and any(m in cmdline for m in ("handoff.worker", "handoff.witness", runtime))) or (
            "/mnt/ssh/sshd_config" in cmdline
        ):
            found.append(process)
    return found


def dead_runtime_markers() -> list[Path]:
    """In-use markers left in this checkout's host user directories. On this machine a
    marker of a live runtime (another run's) is not a leftover; a simulated host's
    markers are named by pids inside that host, and no host outlives its run."""
    local = USER_DIRS / "local"
    markers = USER_DIRS.glob("*/.cache/copilot/pkg/*/*/inuse.*")
    return [m for m in markers
            if not (m.is_relative_to(local) and psutil.pid_exists(int(m.name.split(".")[1])))]


@pytest.fixture(scope="session")
def default_matrix():
    chosen = scenario.select([])
    return chosen, runner.run(chosen, Fact(), jobs=2)


@pytest.fixture(scope="session")
def other_fact_matrix():
    chosen = scenario.select([])
    return chosen, runner.run(chosen, OTHER_FACT, jobs=2)


@pytest.fixture
def keyed_endpoint(tmp_path):
    """The witness started on its own, as a hosted service would be, refusing requests
    without `Authorization: Bearer $ENDPOINT_KEY`."""
    key = "sk-test-right-key-7f3a"
    evidence = tmp_path / "endpoint-evidence.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "handoff.witness", "--require-api-key-env", "ENDPOINT_KEY", "--evidence", str(evidence)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "ENDPOINT_KEY": key},
    )
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("Listening: http://")
        yield line.removeprefix("Listening: ") + "/v1", key, evidence
    finally:
        process.terminate()
        process.wait(timeout=10)
