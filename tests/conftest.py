"""Settings for every test: runs the tests start are stored in a directory of the test
session's own, never in this checkout's .state/runs."""

from __future__ import annotations

import os
import tempfile

import pytest


@pytest.fixture(scope="session", autouse=True)
def runs_dir_of_this_test_session():
    """`handoff run` and `handoff lab` (also in subprocesses, which inherit the variable)
    store their runs here."""
    with tempfile.TemporaryDirectory(prefix="handoff-test-runs-") as directory:
        previous = os.environ.get("HANDOFF_RUNS_DIR")
        os.environ["HANDOFF_RUNS_DIR"] = directory
        try:
            yield directory
        finally:
            if previous is None:
                os.environ.pop("HANDOFF_RUNS_DIR", None)
            else:
                os.environ["HANDOFF_RUNS_DIR"] = previous


# Hypothesis: no deadlines (a wall-clock limit inside a test fails on a busy machine and
# proves nothing; speed is measured by `make bench`), and a fixed derandomised seed in CI
# so a run there can be repeated exactly.
from hypothesis import settings as hypothesis_settings  # noqa: E402

hypothesis_settings.register_profile("handoff", deadline=None, derandomize=bool(os.environ.get("CI")))
hypothesis_settings.load_profile("handoff")
