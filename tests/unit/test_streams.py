"""What the command does when its output has nowhere to go: a closed stream is refused
before anything starts, and a reader that went away is its own exit code, not 1 (which
says a verdict was contradicted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMAND = f"exec {sys.executable} -m handoff list"


@pytest.mark.parametrize(("closed", "said_on", "says"), [
    (">&-", "stderr", "standard output is closed"),
    ("2>&-", "stdout", "standard error is closed"),
])
def test_a_closed_stream_is_bad_input_said_on_the_other(closed, said_on, says):
    done = subprocess.run(["sh", "-c", f"{COMMAND} {closed}"], capture_output=True, text=True)
    assert done.returncode == 2
    assert says in getattr(done, said_on) and "Traceback" not in done.stdout + done.stderr


def test_a_reader_that_went_away_is_exit_141_not_a_contradicted_verdict():
    read_end, write_end = os.pipe()
    os.close(read_end)  # gone before the first line is written: every write fails with EPIPE
    try:
        done = subprocess.run([sys.executable, "-m", "handoff", "list"], stdout=write_end, stderr=subprocess.PIPE,
                              text=True)
    finally:
        os.close(write_end)
    assert done.returncode == 141 and "Traceback" not in done.stderr


@pytest.mark.parametrize("columns", ["0", "1", "wide"])
def test_a_columns_no_output_fits_in_is_left_out(columns):
    done = subprocess.run([sys.executable, "-m", "handoff", "run", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": columns})
    assert done.returncode == 0 and "handoff run [OPTIONS]" in done.stdout and "--jobs" in done.stdout


def test_a_current_directory_that_was_removed_is_bad_input(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    done = subprocess.run(["sh", "-c", f"cd {gone} && rmdir {gone} && exec {sys.executable} -m handoff export k8s "
                                       f"cross-process -o rel.yaml"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 2 and "the current directory has been removed" in done.stderr
    assert "internal error" not in done.stderr

