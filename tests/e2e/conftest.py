"""End-to-end fixtures: the real runtime, the real witness over HTTP, real processes.

The default matrix is run once per test session (it is the expensive part), with a fact
other than the default, and the tests then read its results.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from dataclasses import dataclass

from handoff import owners, scenario_files, versions
from handoff.checker.checks import judge
from handoff.checker.verdicts import RunJudgement, TurnJudgement
from handoff.coordinator import runner
from handoff.coordinator.services import RunSettings
from handoff.fact import Fact
from handoff.hosts.base import USER_DIRS
from handoff.runs.record import RunRecord, ScenarioRecord, StepEvents
from handoff.runtime_locator import PROJECT_ROOT, locate_runtime

# Quotes, a backslash, spaces and a non-ASCII letter: every way a value can be escaped on
# its way through the prompt, the runtime's JSON log and the witness (the tamper fault once
# searched the log for the unescaped value and silently changed nothing).
OTHER_FACT = Fact('O\'Brien "VIP" \\ Großkunden', "customer tier")


def handoff_processes(owner: int) -> list[psutil.Process]:
    """Workers, witnesses and runtimes that the run of ``owner`` (the pid of the `handoff`
    process, or of this test process for a run made in it) started and that still run.
    Other runs, of other tests going on meanwhile, are theirs to check."""
    return [process for process in _this_checkouts_processes() if _owned_by(process, owner)]


def _owned_by(process: psutil.Process, owner: int) -> bool:
    try:
        return process.environ().get(owners.OWNER_VARIABLE) == str(owner)
    except psutil.Error:
        return False


def _this_checkouts_processes() -> list[psutil.Process]:
    """Workers, witnesses and runtimes started by this checkout's tool that still run."""
    runtimes = (str(locate_runtime()), str(versions.RUNTIMES_DIR))  # the default runtime, and the other versions
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "exe", "status"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if process.info["status"] == psutil.STATUS_ZOMBIE or process.pid == os.getpid():
            continue
        ours = str(PROJECT_ROOT) in cmdline  # this checkout's venv or runtime, not another checkout's
        if (ours and any(m in cmdline for m in ("handoff.worker", "handoff.witness", *runtimes))) or (
            "/mnt/ssh/sshd_config" in cmdline and _of_this_checkout(process)
        ):
            found.append(process)
    return found


def _of_this_checkout(process: psutil.Process) -> bool:
    """A simulated host's process (sshd, or the `unshare` it runs under) of this checkout:
    the host was built to keep this project visible (HANDOFF_KEEP, in the environment of
    the `unshare` that sshd, which clears its own, runs under); another checkout's runs,
    going on meanwhile, are theirs."""
    try:
        for member in (process, *process.parents()):
            if str(PROJECT_ROOT) in member.environ().get("HANDOFF_KEEP", "").split():
                return True
    except psutil.Error:
        pass
    return False


def dead_runtime_markers() -> list[Path]:
    """In-use markers left in this checkout's host user directories. On this machine a
    marker of a live runtime (another run's) is not a leftover; a simulated host's
    markers are named by pids inside that host, and no host outlives its run."""
    local = USER_DIRS / "local"
    markers = USER_DIRS.glob("*/.cache/copilot/pkg/*/*/inuse.*")
    return [m for m in markers
            if not (m.is_relative_to(local) and psutil.pid_exists(int(m.name.split(".")[1])))]


@dataclass(frozen=True)
class Outcome:
    """A run's record and its judgement, with the lookups the tests make."""

    record: RunRecord
    judgement: RunJudgement
    fact: Fact

    def scenario(self, name: str) -> ScenarioRecord:
        return next(s for s in self.record.scenarios if s.name == name)

    def steps(self, name: str) -> dict[str, StepEvents]:
        return {step.step: step.view() for step in self.scenario(name).steps}

    def ran(self, name: str) -> dict[str, StepEvents]:
        """The steps of a scenario this machine may not be able to run (containers, pods):
        the test is skipped, with the run's reason, where it could not."""
        skipped = self.scenario(name).skipped
        if skipped:
            pytest.skip(skipped)
        return self.steps(name)

    def turns(self, name: str | None = None) -> list[TurnJudgement]:
        return [t for t in self.judgement.turns if name is None or t.scenario == name]

    def asked(self, name: str) -> list[TurnJudgement]:
        return [t for t in self.turns(name) if t.kind == "ask"]


def run_scenarios(chosen: list, fact: Fact = Fact(), **settings) -> Outcome:
    settings.setdefault("jobs", 1)
    record = runner.run(chosen, RunSettings(fact=fact, **settings))
    return Outcome(record, judge(record), fact)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the groups
def pytest_collection_modifyitems(config, items):
    """For `pytest -n 2 --dist loadgroup` (make test): the tests that read the default
    matrix share one worker, so it runs once, and so do those of a module that share a
    module-scoped fixture (a server, a run); every other test goes to whichever worker is
    free (tests/unit/test_suite_grouping.py checks the grouping). Tests marked `serial`
    (they kill runs with SIGKILL or check the whole machine) are left to a run of their
    own, after the others."""
    for item in items:
        if "e2e" in item.nodeid.split("::")[0] and (group := _shared_with(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _shared_with(item) -> str | None:
    if "matrix" in getattr(item, "fixturenames", ()):
        return "matrix"
    # pytest's own record of the fixtures a test uses (no public accessor gives the scopes).
    fixtures = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(definition.scope == "module" for definitions in fixtures.values() for definition in definitions):
        return item.nodeid.split("::")[0]
    return None


@pytest.fixture(scope="session")
def matrix() -> Outcome:
    """The default matrix, run once, with a fact other than the default: whatever holds
    for it holds for the default fact, whose words appear nowhere but handoff/fact.py
    (tests/unit/test_fact.py checks that)."""
    return run_scenarios(scenario_files.select([]), OTHER_FACT, jobs=2)


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


@pytest.fixture(scope="module")
def postgres_url():
    """A throwaway PostgreSQL server for a module's tests (handoff/stores/postgres_server.py)."""
    from handoff.stores.postgres_server import ThrowawayPostgres

    server = ThrowawayPostgres(["127.0.0.1"])
    try:
        yield server.start()
    finally:
        server.stop()
