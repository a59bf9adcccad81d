"""`handoff doctor` on this machine, and on a machine where the runtime is broken."""

from __future__ import annotations

import os
import subprocess
import sys

from handoff.runtime_locator import PINNED_RUNTIME


def doctor(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "handoff", "doctor"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "1000", **env})  # a line each: the lines are read


def test_ready_here_and_names_the_pinned_pair_and_leaves_nothing_in_tmpdir(tmp_path):
    """Each `<runtime> --version` runs as a local worker's runtime would: Node's compile
    cache in the local host's user directory, not in TMPDIR (Node's default)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = doctor(TMPDIR=str(scratch))
    assert sorted(path.name for path in scratch.iterdir()) == []
    assert done.returncode == 0, done.stdout
    assert "FAIL" not in done.stdout
    assert f"SDK 1.0.25 / runtime {PINNED_RUNTIME}: installed as pinned" in done.stdout
    for label in ("Python", "SDK", "runtime", "node / npm", "namespace hosts", "ssh hosts", "database store",
                  "witness", "copilot", "openai-compatible", "runtime/node_modules", "lab home"):
        assert f"  {label} " in done.stdout, label
    assert done.stdout.rstrip().endswith("try `handoff lab` first.")


def test_a_runtime_that_is_not_executable_fails_and_says_what_to_fix(tmp_path):
    broken = tmp_path / "copilot"
    broken.write_text("not a program\n")
    broken.chmod(0o644)
    done = doctor(COPILOT_CLI_PATH=str(broken))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    failed = [i for i, line in enumerate(lines) if line.lstrip().startswith("FAIL")]
    assert len(failed) == 1
    assert f"COPILOT_CLI_PATH={broken} is not an executable file" in lines[failed[0]]
    assert lines[failed[0] + 1].strip() == "fix: fix the path or unset it"
    assert "pinned pair" in done.stdout and "not checked: no runtime" in done.stdout
    assert lines[-1] == "Not ready: fix the lines marked FAIL, then run `handoff doctor` again."
    assert "Traceback" not in done.stdout + done.stderr


def test_a_runtime_of_another_version_breaks_the_pair(tmp_path):
    other = tmp_path / "copilot"
    other.write_text("#!/bin/sh\necho 'GitHub Copilot CLI 1.0.99.'\n")
    other.chmod(0o755)
    done = doctor(COPILOT_CLI_PATH=str(other))
    assert done.returncode == 1
    pair = next(line for line in done.stdout.splitlines() if "pinned pair" in line)
    assert pair.lstrip().startswith("FAIL")
    assert f"want SDK 1.0.25 / runtime {PINNED_RUNTIME}, found SDK 1.0.25 / runtime 1.0.99" in pair


def test_it_reports_the_container_engine_and_the_image_and_without_podman_says_how_to_get_it(tmp_path):
    here = doctor()
    for label in ("container engine", "docker"):
        assert f"  {label} " in here.stdout, label
    if "  ok    container engine" in here.stdout:
        assert "  worker image " in here.stdout
    # A PATH with everything but podman: the engine is missing, with the fix; still ready.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for directory in os.environ["PATH"].split(":"):
        for tool in (os.listdir(directory) if os.path.isdir(directory) else []):
            if tool != "podman" and not (bin_dir / tool).exists():
                (bin_dir / tool).symlink_to(os.path.join(directory, tool))
    without = doctor(PATH=str(bin_dir))
    assert without.returncode == 0, without.stdout
    engine = without.stdout.splitlines()
    at = next(i for i, line in enumerate(engine) if "container engine" in line)
    assert engine[at].lstrip().startswith("--") and "`podman` is not installed" in engine[at]
    assert "apt-get install podman runc" in engine[at + 1]

