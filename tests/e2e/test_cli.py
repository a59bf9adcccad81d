"""The `handoff` command as a user meets it: exit codes, messages, cleanup on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from handoff.cli import app

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
    rows = json.loads(out.read_text())["rows"]
    assert [r["verdict"] for r in rows if r["kind"] == "ask"] == ["lost"]


def test_unknown_host_name_is_bad_input():
    result = runner.invoke(app, ["run", "cross-machine-ssh", "--host", "z=ssh://root@example"])
    assert result.exit_code == 2
    assert "no selected scenario has a host named 'z'" in result.output


def test_malformed_host_url_is_bad_input():
    result = runner.invoke(app, ["run", "cross-machine-ssh", "--host", "b=http://machine"])
    assert result.exit_code == 2
    assert "expected ssh://user@machine" in result.output


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
    assert [_cmdline(p) for p in handoff_processes()] == []
    assert handoff_network_leftovers() == []
    left = {name for name in set(os.listdir(tempfile.gettempdir())) - before if name.startswith("handoff-run-")}
    assert left == set()
