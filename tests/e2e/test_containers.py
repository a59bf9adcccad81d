"""Container hosts on the real engine: every step in a container of its own, the homes the
scenarios say, nothing of a run left in the engine, and a Docker engine that is not there
skipped with the reason. The container scenarios' verdicts are checked with every other
scenario's (test_ladder.py), from the same run of the default matrix."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid

import pytest

from handoff import leftovers, owners
from handoff.containers import image
from handoff.containers.engine import ENGINES, Engine
from handoff.hosts.base import Launch
from handoff.hosts.capability import missing_capability
from handoff.hosts.container import HOME_INSIDE, ContainerHost, ContainerSetup, software_mounts
from handoff.runtime_locator import PROJECT_ROOT, locate_runtime
from handoff.words import Verdict

pytestmark = pytest.mark.e2e
ENGINE_KINDS = ("container", "volume", "network")


def test_each_step_ran_in_a_container_of_its_own(matrix):
    a, b = matrix.ran("cross-container-volume").values()
    assert (a.ready.pid, b.ready.pid) == (1, 1)  # each the first process of its own PID namespace
    assert (a.ready.hostname, b.ready.hostname) == ("ctr-a-1", "ctr-b-1")
    assert a.ready.address != b.ready.address
    # each container host a machine of its own on the run's simulated LAN (podman joins its namespace)
    assert a.ready.address.startswith("10.213.") and b.ready.address.startswith("10.213.")
    assert a.ready.home == b.ready.home == HOME_INSIDE
    assert b.eventlog.closed_before_resume is True


def test_a_restart_is_the_same_container_and_a_new_container_is_not(matrix):
    steps = matrix.ran("container-restart-anonymous-volume")
    assert [steps[name].ready.hostname for name in "ABC"] == ["ctr-a-1", "ctr-a-1", "ctr-a-2"]
    assert len({steps[name].ready.address for name in "ABC"}) == 1  # one machine, whichever of its containers
    kept, lost = matrix.asked("container-restart-anonymous-volume")
    assert (kept.step.step, kept.verdict) == ("B", Verdict.KEPT)
    assert (lost.step.step, lost.verdict) == ("C", Verdict.LOST) and "Session not found" in lost.reason


def test_containers_with_nothing_shared_lose_the_session(matrix):
    matrix.ran("cross-container-nothing-shared")
    [turn] = matrix.asked("cross-container-nothing-shared")
    assert turn.verdict == Verdict.LOST and "Session not found" in turn.reason


def test_containers_reach_postgresql_over_the_simulated_lan(matrix):
    a, b = matrix.ran("cross-container-postgres").values()
    assert a.ready.store and a.ready.store == b.ready.store
    assert "127.0.0.1" not in a.ready.store  # the LAN's gateway, where the container host is a machine
    [turn] = matrix.asked("cross-container-postgres")
    assert turn.verdict == Verdict.KEPT


def test_nothing_of_the_runs_is_left_in_the_engine(matrix):
    matrix.ran("cross-container-volume")
    mine = [left for left in leftovers.find(of=os.getpid()) if left.kind in ENGINE_KINDS]
    assert mine == []


@pytest.fixture(scope="module")
def worker_image() -> str:
    problem = missing_capability("container") or Engine().problem()
    if problem:
        pytest.skip(problem)
    recipe = image.recipe()
    if not image.present(Engine(), recipe):
        pytest.skip(f"{recipe.tag} is not built (make containers)")
    return recipe.tag


def test_a_container_sees_its_home_and_the_software_and_nothing_else_of_this_machine(worker_image, tmp_path):
    """A container host's own view, looked at from inside: its hostname, its process 1,
    an empty volume as home, the project's code and packages read-only, and none of the
    files here that are not mounted (this test's directory, the project's .state)."""
    (tmp_path / "here-only").write_text("x")
    (tmp_path / "pids").mkdir()
    engine = Engine()
    setup = ContainerSetup(engine, worker_image, "podman", "127.0.0.1:9", locate_runtime(), tmp_path / "pids")
    prefix = f"handoff-{owners.tag()}{uuid.uuid4().hex[:2]}-view"
    host = ContainerHost("v", setup, prefix)
    packages = software_mounts(locate_runtime())[1][0]
    look = (f"hostname; tr '\\0' ' ' </proc/1/cmdline; echo; ls -A {HOME_INSIDE} | wc -l; "
            f"ls {tmp_path} 2>&1 | grep -c 'No such'; ls {PROJECT_ROOT}; "
            f"test -d {packages}/copilot && echo sdk; touch {PROJECT_ROOT}/handoff/x 2>&1 | grep -c 'Read-only'")
    try:
        done = subprocess.run(host.run_command(f"{prefix}-v1", tmp_path / "home-shared", Launch(), "sh", "-c", look),
                              capture_output=True, text=True, timeout=120, env=engine.env())
    finally:
        asyncio.run(host.close())
    assert done.returncode == 0, done.stderr
    hostname, first, home_entries, missing_here, *project, sdk, read_only = done.stdout.split("\n")[:-1]
    assert hostname == "ctr-v-1"
    assert first.startswith("sh -c ")
    assert home_entries == "0" and missing_here == "1"
    assert project == ["handoff", "runtime"]  # only the code and the runtime: no .state, nor of .venv more than its packages
    assert sdk == "sdk" and read_only == "1"
    assert [left for left in leftovers.find(of=os.getpid()) if left.kind in ENGINE_KINDS] == []


@pytest.mark.skipif(Engine("docker").problem() is None, reason="a Docker daemon answers here: the skip path is moot")
def test_docker_without_a_daemon_is_skipped_with_the_reason():
    done = subprocess.run([sys.executable, "-m", "handoff", "run", "--engine", "docker", "cross-container-volume"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 4, done.stderr  # nothing judged: every scenario skipped
    out = " ".join(done.stdout.split())
    assert "skipped: host 'a' (container):" in out and "Docker" in out and "--engine podman" in out


def test_an_unknown_engine_is_bad_input():
    done = subprocess.run([sys.executable, "-m", "handoff", "run", "--engine", "lxd", "cross-container-volume"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: --engine lxd: choose one of {', '.join(ENGINES)}"


def test_image_build_finds_the_image_built_and_names_what_is_missing(worker_image):
    from typer.testing import CliRunner

    from handoff.cli import app

    runner = CliRunner()
    built = runner.invoke(app, ["image", "build"])
    assert built.exit_code == 0 and built.stdout.strip().endswith(worker_image)
    assert runner.invoke(app, ["image", "tag"]).stdout.strip() == worker_image
    if Engine("docker").problem() is not None:
        docker = runner.invoke(app, ["image", "build", "--engine", "docker"])
        assert docker.exit_code == 2 and "Docker daemon" in docker.output
