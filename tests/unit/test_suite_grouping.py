"""`make test` runs the end-to-end tests two at a time (pytest-xdist, --dist loadgroup),
with every test that reads the default matrix on one worker (tests/e2e/conftest.py), so
that the matrix runs once. If the grouping stops working nothing fails: each worker just
runs the matrix of its own, and the suite takes two minutes longer. It broke that way
twice: the conftest's hook ran after pytest-xdist's, which reads the groups, and pytest
9.2 stopped pytest-xdist 3.8 from marking them (pytest-xdist issue 1386). So this runs a
small grouped session with the conftest's hook and looks where its tests ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFTEST = """
import os
import pytest
from tests.e2e.conftest import pytest_collection_modifyitems  # the grouping make test uses

@pytest.fixture(scope="session")
def matrix():
    return os.environ["PYTEST_XDIST_WORKER"]
"""
READER = """
import os
from pathlib import Path

def test_{n}_one(matrix):
    Path(os.environ["SEEN"], "{n}-one").write_text(matrix)

def test_{n}_two(matrix):
    Path(os.environ["SEEN"], "{n}-two").write_text(matrix)

def test_{n}_other():
    pass
"""


def test_every_test_that_reads_the_matrix_runs_on_one_worker(tmp_path):
    suite, seen = tmp_path / "e2e", tmp_path / "seen"
    suite.mkdir()
    seen.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    for n in ("a", "b", "c"):
        (suite / f"test_{n}.py").write_text(READER.format(n=n))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-n", "2", "--dist", "loadgroup", "--rootdir", str(tmp_path), "e2e"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SEEN": str(seen), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {path.name: path.read_text() for path in seen.iterdir()}
    assert len(workers) == 6 and len(set(workers.values())) == 1, workers
