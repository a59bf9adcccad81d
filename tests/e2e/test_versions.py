"""Other runtime and SDK versions on the real runtimes: the ladder's version scenarios, a
step's version is its runtime's own (or the step fails loudly), and `handoff skew`.

What needs a version that is not installed is skipped with the command that installs it
(`make test` runs `make runtimes` first)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from handoff import leftovers, versions
from handoff.cli import app
from handoff.fact import quote
from handoff.runtime_locator import locate_runtime, platform_package
from handoff.scenario_files import load
from handoff.words import Verdict

from tests.e2e.conftest import run_scenarios

pytestmark = pytest.mark.e2e
OLDER = "1.0.92"  # the runtime the upgrade and downgrade scenarios use besides the default


def need(runtimes=(), sdks=()):
    missing = [f"runtime {v}" for v in runtimes if v not in versions.installed_runtimes()]
    missing += [f"SDK {v}" for v in sdks if v not in versions.installed_sdks()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: run `{versions.INSTALL_COMMAND}`")


def test_an_upgrade_runs_each_step_on_the_version_it_names_and_keeps_every_event(matrix):
    need([OLDER])
    steps = matrix.steps("upgrade-between-turns")
    assert (steps["A"].ready.runtime_version, steps["B"].ready.runtime_version) == (OLDER, "1.0.102")
    assert steps["B"].eventlog.created_by == OLDER  # the log says who created it, too
    [asked] = matrix.asked("upgrade-between-turns")
    assert (asked.verdict, asked.as_expected, asked.step.loaded_all_events) == (Verdict.KEPT, True, True)


def test_a_downgrade_is_refused_by_the_guard_naming_both_versions_and_skips_events_raw(matrix):
    need([OLDER])
    guarded, raw = matrix.asked("downgrade-between-turns")
    assert guarded.verdict == Verdict.REFUSED
    assert f"runtime {OLDER} may not resume a session last written by runtime 1.0.102" in guarded.reason
    assert (raw.verdict, raw.as_expected) == (Verdict.KEPT, True)
    log = raw.step.eventlog
    assert log.resume_event_count < log.events_before_resume  # the older runtime skipped what it does not know
    [known_good] = matrix.asked("downgrade-known-good")
    assert (known_good.verdict, known_good.as_expected) == (Verdict.KEPT, True)


def test_an_sdk_that_needs_a_newer_runtime_never_gets_the_answer_the_log_holds(matrix):
    need(["1.0.40"], ["1.0.24"])
    steps = matrix.steps("resume-on-old-runtime")
    undelivered, kept = matrix.asked("resume-on-old-runtime")
    assert (steps["B"].ready.runtime_version, steps["B"].ready.sdk_version) == ("1.0.40", versions.DEFAULT_SDK)
    assert undelivered.verdict == Verdict.UNDELIVERED and undelivered.answer is None
    assert "Timeout after 20.0s" in undelivered.reason and quote(matrix.fact.value) in steps["B"].eventlog.last_reply
    # The verdict rested on the time-out, and says so, with when the log had the answer.
    assert undelivered.timed.startswith("no answer within 20 s; the session's log has the answer at +")
    # Step C asked for SDK 1.0.24: only a worker spawned from that SDK's environment
    # reports it (one forked from the zygote would run the default SDK).
    assert (steps["C"].ready.runtime_version, steps["C"].ready.sdk_version) == ("1.0.40", "1.0.24")
    assert (kept.verdict, kept.as_expected) == (Verdict.KEPT, True)
    assert {f.action for f in steps["C"].failures} == {"close", "stop"}  # 1.0.40 has no session.detach, no runtime.shutdown
    assert all("-32601" in f.message for f in steps["C"].failures)


ONE_STEP = '''title = "T"
proves = "P"
does_not_prove = "D"

[[steps]]
name = "A"
runtime = "{version}"
actions = ["create", "tell", "ask", "close"]
expect = "kept"
'''


@pytest.fixture
def cache_with_only_the_newest(tmp_path):
    """An unpack cache holding only the default runtime (1.0.102), unpacked into it by
    that runtime itself."""
    cache = tmp_path / "cache"
    done = subprocess.run([str(locate_runtime()), "--no-auto-update", "--version"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "XDG_CACHE_HOME": str(cache), "HOME": str(tmp_path),
                                            "NODE_COMPILE_CACHE": str(tmp_path / "node-compile-cache")})
    assert done.returncode == 0, done.stderr
    unpacked = cache / "copilot" / "pkg"
    assert [p.name for p in unpacked.glob("*/*")] == [versions.DEFAULT_RUNTIME]
    return cache


def test_a_step_runs_the_runtime_it_names_even_when_its_cache_holds_a_newer_one(tmp_path, monkeypatch,
                                                                             cache_with_only_the_newest):
    need([OLDER])
    cache = cache_with_only_the_newest
    executable = versions.runtime(OLDER).executable
    # The trap is real: asked without --no-auto-update, this runtime says it is the newer one.
    fooled = subprocess.run([str(executable), "--version"], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "XDG_CACHE_HOME": str(cache), "HOME": str(tmp_path),
                                 "NODE_COMPILE_CACHE": str(tmp_path / "node-compile-cache")})
    assert "1.0.102" in fooled.stdout
    (tmp_path / "caches").mkdir()
    os.rename(cache, tmp_path / "caches" / OLDER)
    monkeypatch.setattr(versions, "RUNTIME_CACHES", tmp_path / "caches")
    path = tmp_path / "own-version.toml"
    path.write_text(ONE_STEP.format(version=OLDER))
    outcome = run_scenarios([load(path)])
    [step] = outcome.steps("own-version").values()
    assert step.ready.runtime_version == OLDER
    [asked] = outcome.asked("own-version")
    assert (asked.verdict, asked.as_expected) == (Verdict.KEPT, True)
    assert OLDER in [p.name for p in (tmp_path / "caches" / OLDER / "copilot" / "pkg").glob("*/*")]


def test_a_runtime_that_is_not_the_version_asked_for_fails_the_step_loudly(tmp_path, monkeypatch,
                                                                          cache_with_only_the_newest):
    """A "1.0.92" install whose executable is really 1.0.102: the step measures nothing."""
    executable = tmp_path / "runtimes" / OLDER / "node_modules" / "@github" / platform_package() / "copilot"
    executable.parent.mkdir(parents=True)
    executable.symlink_to(locate_runtime())
    (tmp_path / "runtimes" / OLDER / "package-lock.json").write_text("{}")
    (tmp_path / "caches").mkdir()
    os.rename(cache_with_only_the_newest, tmp_path / "caches" / OLDER)
    monkeypatch.setattr(versions, "RUNTIMES_DIR", tmp_path / "runtimes")
    monkeypatch.setattr(versions, "RUNTIME_CACHES", tmp_path / "caches")
    path = tmp_path / "substituted.toml"
    path.write_text(ONE_STEP.format(version=OLDER))
    outcome = run_scenarios([load(path)])
    [step] = outcome.steps("substituted").values()
    assert step.ready.runtime_version == "1.0.102"
    assert [f.action for f in step.failures] == ["start"]
    assert step.turns == []  # nothing ran on the wrong runtime
    [asked] = outcome.asked("substituted")
    assert asked.verdict == Verdict.UNKNOWN
    assert f"asked for runtime {OLDER}, the runtime reports 1.0.102" in asked.reason
    assert outcome.judgement.exit_code() == 4


runner = CliRunner()


def test_skew_refuses_a_version_it_cannot_run_before_anything_starts():
    result = runner.invoke(app, ["skew", "--runtime", "1.0.99"])
    assert result.exit_code == 2
    assert "runtime 1.0.99 is not pinned by this project" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["skew", "--sdk", "latest"])
    assert (result.exit_code, "not a version number" in result.output) == (2, True)


def handoff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "handoff", *args], capture_output=True, text=True, timeout=600)


def test_skew_prints_a_grid_both_ways_stores_it_and_report_prints_it_again():
    need([OLDER])
    done = subprocess.Popen([sys.executable, "-m", "handoff", "skew", "--runtime", OLDER, "--runtime", "1.0.102",
                             "--sdk", versions.DEFAULT_SDK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = done.communicate(timeout=600)
    assert done.returncode == 0, out + err
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("1.0.")}
    old, new = f"{OLDER}/{versions.DEFAULT_SDK}", f"1.0.102/{versions.DEFAULT_SDK}"
    assert rows[old] == ["kept", "kept"]  # the diagonal, then the upgrade
    assert rows[new][:2] == ["kept", "7/8"]  # the downgrade loads 7 of the 8 events 1.0.102 wrote
    assert "4 cells, 4 as expected" in out
    run_id = err.split("Stored as ")[1].split()[0]
    again = handoff("report", run_id)
    assert (again.returncode, again.stdout) == (0, out)
    assert handoff("diff", run_id, run_id).returncode == 0
    assert "skew" in handoff("runs").stdout
    assert leftovers.find(of=done.pid) == []  # nothing of that run is left
