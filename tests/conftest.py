"""Settings for every test: runs the tests start are stored in a directory of the test
session's own, never in this checkout's .state/runs."""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

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


@pytest.fixture(scope="session", autouse=True)
def a_terminal_100_columns_wide():
    """What the commands print fits the terminal (handoff/report/fit.py): every test sees
    one of 100 columns, whatever terminal, or none, the tests run in (also in the
    processes they start, which inherit the variable). A test of another width sets it."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


@pytest.fixture(scope="session", autouse=True)
def nothing_written_at_the_file_system_s_root():
    """A test writes only where it was given: a property test once joined a generated file
    name that began with '/' to its temporary directory and left 2,400 files in /."""
    before = set(os.listdir("/"))
    yield
    made = sorted(set(os.listdir("/")) - before)
    if made:
        pytest.fail(f"the tests wrote {len(made)} entries into /: {made[:5]}", pytrace=False)


# Hypothesis: no deadlines (a wall-clock limit inside a test fails on a busy machine and
# proves nothing; speed is measured by `make bench`), and a fixed derandomised seed in CI
# so a run there can be repeated exactly.
from hypothesis import settings as hypothesis_settings  # noqa: E402

hypothesis_settings.register_profile("handoff", deadline=None, derandomize=bool(os.environ.get("CI")))
hypothesis_settings.load_profile("handoff")


# A skip in CI is a failure: a capability check that broke would otherwise skip whole rungs
# and leave CI green. Only a test listed in tests/allowed_skips.toml, with the reason it
# may skip there, is let through.
ALLOWED_SKIPS = Path(__file__).with_name("allowed_skips.toml")


def _allowed_skips() -> dict[str, str]:
    """Test ids (or their start, up to a '[' or '::') -> why each may skip in CI."""
    listed = tomllib.loads(ALLOWED_SKIPS.read_text(encoding="utf-8")).get("skip", [])
    return {entry["test"]: entry["reason"] for entry in listed}


def _allowed(nodeid: str, allowed: dict[str, str]) -> bool:
    return any(nodeid == test or nodeid.startswith((test + "[", test + "::")) for test in allowed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") != "true" or not report.skipped or getattr(report, "wasxfail", None) is not None:
        return
    if _allowed(report.nodeid, _allowed_skips()):
        return
    why = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (f"skipped in CI ({why}): a skip in CI is a failure, so that a broken capability check cannot "
                       f"hide a rung; make the test run here, or list it with its reason in {ALLOWED_SKIPS.name}")
