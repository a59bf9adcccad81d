"""The `handoff` command as a user meets it: exit codes, messages, cleanup on Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from handoff import owners
from handoff.cli import app
from handoff.hosts.capability import missing_capability

from tests.e2e.conftest import handoff_processes
from tests.e2e.test_hosts import handoff_network_leftovers

runner = CliRunner()


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # it ended (or is a zombie) while we looked
        return ""
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_list_names_every_scenario():
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0
    for path in SCENARIOS.glob("*.toml"):
        assert path.stem in result.output


def test_unknown_scenario_is_bad_input():
    result = runner.invoke(app, ["run", "no-such-scenario"])
    assert result.exit_code == 2
    assert "unknown scenario 'no-such-scenario'" in result.output
    assert "cross-process" in result.output  # the message lists the choices
    assert "Traceback" not in result.output


def test_malformed_scenario_names_file_step_and_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('title="t"\nproves="p"\ndoes_not_prove="d"\n[[steps]]\nname="B"\nactions=["resume","fly"]\n')
    result = runner.invoke(app, ["run", str(bad)])
    assert result.exit_code == 2
    assert str(bad) in result.output and "step 'B'" in result.output and "'actions'" in result.output


def test_empty_fact_is_bad_input():
    result = runner.invoke(app, ["run", "--fact", " "])
    assert result.exit_code == 2


def test_missing_runtime_says_to_run_make_setup(monkeypatch, tmp_path):
    monkeypatch.setenv("COPILOT_CLI_PATH", str(tmp_path / "nothing-here"))
    result = runner.invoke(app, ["run", "cross-process"])
    assert result.exit_code == 2
    assert "COPILOT_CLI_PATH" in result.output
    assert "Plan:" not in result.output  # bad input is its one line, with nothing said before it


@pytest.mark.e2e
def test_a_wrong_expectation_fails_the_run(tmp_path):
    """The isolated store must lose the context: a file claiming 'kept' must fail (exit 1)."""
    text = (SCENARIOS / "isolated-store.toml").read_text().replace('expect = "lost"', 'expect = "kept"')
    wrong = tmp_path / "isolated-store-claims-kept.toml"
    wrong.write_text(text)
    out = tmp_path / "results.json"
    result = runner.invoke(app, ["run", str(wrong), "--json", str(out)])
    assert result.exit_code == 1, result.output
    assert "NOT as expected: isolated-store-claims-kept" in result.output
    [scenario] = json.loads(out.read_text())["judgement"]["scenarios"]
    assert [(t["verdict"], t["as_expected"]) for t in scenario["turns"] if t["kind"] == "ask"] == [("lost", False)]


def test_unknown_host_name_is_bad_input():
    result = runner.invoke(app, ["run", "cross-machine-ssh", "--host", "z=ssh://root@example"])
    assert result.exit_code == 2
    assert "no selected scenario has a host named 'z'" in result.output


def test_malformed_host_url_is_bad_input():
    result = runner.invoke(app, ["run", "cross-machine-ssh", "--host", "b=http://machine"])
    assert result.exit_code == 2
    assert "--host b=http://machine: the scheme must be ssh; expected e.g. ssh://user@machine" in result.output


@pytest.mark.e2e
@pytest.mark.parametrize("names", [["crash-after-turn", "cross-process"], ["cross-machine-ssh"]])
def test_ctrl_c_mid_step_leaves_nothing_behind(names):
    before = set(os.listdir(tempfile.gettempdir()))
    process = subprocess.Popen(
        [sys.executable, "-m", "handoff", "run", *names],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    me = psutil.Process(process.pid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until a worker's runtime is up mid-step
        if any("copilot" in _cmdline(c) for c in me.children(recursive=True)):
            break
        time.sleep(0.05)
    else:
        process.kill()
        pytest.fail("no runtime started within 60 s")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert [_cmdline(p) for p in handoff_processes(process.pid)] == []
    assert handoff_network_leftovers() == []
    # only this run's directory counts: other checkouts' runs come and go meanwhile
    mine = f"{owners.RUN_DIR_PREFIX}{owners.tag(process.pid)}-"
    left = {name for name in set(os.listdir(tempfile.gettempdir())) - before if name.startswith(mine)}
    assert left == set()


DOOMED = """
title = "A host that cannot be made"
proves = "-"
does_not_prove = "-"

[hosts]
doomed = "namespace"

[[steps]]
name = "A"
host = "doomed"
actions = ["create", "tell", "close"]

[[steps]]
name = "B"
actions = ["resume", "ask", "close"]
expect = "kept"
"""


@pytest.mark.e2e
@pytest.mark.skipif(missing_capability("namespace") is not None, reason=str(missing_capability("namespace")))
def test_a_host_that_cannot_be_made_crashes_only_its_own_scenario(tmp_path, monkeypatch):
    """The namespace of one scenario's host cannot be created: that scenario's row says
    crashed, with the reason; the two others run and are judged; the run exits 4."""
    from handoff.hosts.network import Lan, NetworkError

    real_add_host = Lan.add_host

    def add_host(lan, name):
        if name == "doomed":
            raise NetworkError("`ip netns add` failed: the test refused to make this namespace")
        return real_add_host(lan, name)

    monkeypatch.setattr(Lan, "add_host", add_host)
    doomed = tmp_path / "doomed-host.toml"
    doomed.write_text(DOOMED, encoding="utf-8")
    out = tmp_path / "run.json"
    result = runner.invoke(app, ["run", "cross-process", str(doomed), "isolated-store", "--json", str(out)])
    assert result.exit_code == 4, result.output
    assert "crashed" in result.output and "the test refused to make this namespace" in result.output
    assert "could not be judged: doomed-host" in result.output
    scenarios = {s["name"]: s for s in json.loads(out.read_text())["judgement"]["scenarios"]}
    assert "the test refused" in scenarios["doomed-host"]["crashed"]
    for name in ("cross-process", "isolated-store"):
        asked = [t for t in scenarios[name]["turns"] if t["kind"] == "ask"]
        assert [t["as_expected"] for t in asked] == [True], name
    assert handoff_network_leftovers() == []


@pytest.mark.e2e
def test_a_stored_run_reports_again_byte_for_byte_as_it_ran(tmp_path):
    def handoff(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "handoff", *args, "--runs-dir", str(tmp_path)],
                              capture_output=True, text=True, timeout=300)

    ran = handoff("run", "same-process", "isolated-store")
    assert ran.returncode == 0, ran.stderr
    [run_id] = [name for name in os.listdir(tmp_path) if (tmp_path / name).is_dir()]  # beside: scenario-seconds.json
    assert f"Stored as {run_id}" in ran.stderr
    # stderr is a pipe here, not a terminal: progress is one plain line per finished scenario.
    progress = [line for line in ran.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 2 and "\x1b" not in ran.stderr
    assert {re.sub(r"^\[\d/2 +[\d.]+ s\] ", "", line).split(" (")[0] for line in progress} == \
        {"same-process: kept, as expected", "isolated-store: lost, as expected"}
    again = handoff("report", run_id)
    assert (again.returncode, again.stdout) == (0, ran.stdout)
    assert run_id in handoff("runs").stdout


@pytest.mark.e2e
def test_keep_copies_the_runs_files_but_no_socket_and_leaves_no_run_directory(tmp_path):
    kept = tmp_path / "kept"
    mine = f"{owners.RUN_DIR_PREFIX}{owners.tag()}-"  # (CliRunner runs here; other checkouts' come and go)
    before = {name for name in os.listdir(tempfile.gettempdir()) if name.startswith(mine)}
    result = runner.invoke(app, ["run", "same-process", "--keep", str(kept)])
    assert result.exit_code == 0, result.output
    assert (kept / "witness-evidence.jsonl").is_file() and (kept / "same-process" / "home-shared").is_dir()
    assert not (kept / "zygote.sock").exists()
    after = {name for name in os.listdir(tempfile.gettempdir()) if name.startswith(mine)}
    assert after == before


def test_a_run_in_a_deep_tmpdir_works_and_leaves_nothing_there(tmp_path):
    """Deeper than a Unix socket's path may be (107 bytes): the zygote's socket lives in
    the run directory there, and is reached by a short path all the same. The run
    directory goes at the end, and the runtimes keep Node's compile cache in the host's
    user directory: the default put it in TMPDIR, where it grew by ~2.4 MB per checkout
    path and runtime version and nothing removed it."""
    scratch = tmp_path / ("deep-" * 24)
    scratch.mkdir()
    assert len(str(scratch)) > 108
    done = subprocess.run([sys.executable, "-m", "handoff", "run", "same-process"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in scratch.iterdir()) == []


def test_a_fact_the_output_s_encoding_lacks_is_shown_escaped_and_the_run_judged(tmp_path):
    """PYTHONIOENCODING=ascii (or a C locale's terminal) cannot write 'Ü': the run still
    runs, judges and says so, the fact shown escaped; it was an internal error, exit 3."""
    done = subprocess.run([sys.executable, "-m", "handoff", "run", "same-process", "--fact", "Ü", "--jobs", "1",
                           "--runs-dir", str(tmp_path)], capture_output=True, text=True, errors="replace",
                          env={**os.environ, "PYTHONIOENCODING": "ascii"}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Fact to remember: '\\xdc'" in done.stdout and "internal error" not in done.stderr


def test_a_runtime_the_simulated_hosts_cannot_see_is_bad_input_before_anything_starts(tmp_path):
    """A runtime under /tmp (each simulated host has an empty /tmp of its own) failed every
    step on those hosts minutes into the run; now it is one line and exit 2 at once, and
    a plan of local steps alone still runs with it."""
    from handoff.runtime_locator import locate_runtime

    link = Path(tempfile.mkdtemp(prefix="handoff-test-runtime-", dir="/tmp")) / "copilot"
    link.symlink_to(locate_runtime())
    try:
        environment = {**os.environ, "COPILOT_CLI_PATH": str(link)}
        done = subprocess.run([sys.executable, "-m", "handoff", "run", "cross-machine-shared-dir"], env=environment,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip() == (f"error: COPILOT_CLI_PATH {link}: the simulated hosts (namespace) have an empty "
                                       f"/tmp of their own, so they cannot run it; put the runtime under the project or "
                                       f"another directory outside /tmp, or unset COPILOT_CLI_PATH")
        local = subprocess.run([sys.executable, "-m", "handoff", "run", "same-process"], env=environment,
                               capture_output=True, text=True, timeout=120)
        assert local.returncode == 0, local.stderr
    finally:
        link.unlink()
        link.parent.rmdir()
