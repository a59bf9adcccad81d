"""A skip in CI fails the run unless tests/allowed_skips.toml lists the test with its reason
(tests/conftest.py), checked by running pytest on a small suite with the same conftest."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent

SUITE = '''
import pytest

def test_skips():
    pytest.skip("no such capability")

@pytest.mark.parametrize("n", [1, 2])
def test_allowed(n):
    pytest.skip("moot here")

@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False

def test_runs():
    pass
'''
ALLOWED = '''
[[skip]]
test = "test_suite.py::test_allowed"
reason = "moot here"
'''


def run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "allowed_skips.toml").write_text(ALLOWED)
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": ci} if ci else {})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:cov",
                           "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


def test_in_ci_an_unlisted_skip_fails_and_says_why(tmp_path):
    done = run(tmp_path, "true")
    assert done.returncode == 1, done.stdout
    assert "FAILED test_suite.py::test_skips - skipped in CI (Skipped: no such capability)" in done.stdout
    assert "1 failed, 1 passed, 2 skipped, 1 xfailed" in done.stdout


def test_outside_ci_a_skip_is_a_skip(tmp_path):
    done = run(tmp_path, None)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 3 skipped, 1 xfailed" in done.stdout


def test_every_listed_skip_names_a_test_and_a_reason():
    import tomllib

    listed = tomllib.loads((TESTS / "allowed_skips.toml").read_text())["skip"]
    for entry in listed:
        assert set(entry) == {"test", "reason"} and entry["reason"].strip()
        path = entry["test"].split("::")[0]
        assert (TESTS.parent / path).is_file(), entry["test"]
        assert entry["test"].split("::")[1].split("[")[0] in (TESTS.parent / path).read_text()
