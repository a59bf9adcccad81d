"""An id is not a permission: each failure on the raw SDK, and the guard that prevents it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from handoff.cli import app
from handoff.fact import quote
from handoff.faults.base import TAMPERED_VALUE

pytestmark = pytest.mark.e2e


def _refusal(step) -> str:
    """The first refusal of the step (later actions may be refused too)."""
    return next(e for e in step.failures if e.refused).message


def test_foreign_principal_raw_reads_alices_fact_guarded_is_denied(matrix):
    steps = matrix.steps("foreign-principal")
    assert quote(matrix.fact.value) in steps["bob-raw"].turns[0].answer
    assert _refusal(steps["bob-guarded"]).startswith("access denied")


def test_denial_does_not_say_whether_the_id_exists(matrix):
    guessed = _refusal(matrix.steps("guessed-id")["bob-guarded"])
    foreign = _refusal(matrix.steps("foreign-principal")["bob-guarded"])
    assert guessed == foreign


def test_secret_in_id_is_refused_without_echoing_it(matrix):
    steps = matrix.steps("secret-in-id")
    message = _refusal(steps["guarded"])
    assert "was not minted for you" in message and "phone number" in message
    assert steps["guarded"].record.session_id not in message
    assert steps["raw"].finished and steps["raw"].turns[0].answer == "OK"


def test_an_id_minted_from_the_phone_number_carries_none_of_it(matrix):
    minted = matrix.steps("secret-in-id")["minted"]
    assert minted.reported_session_id.startswith("hs-")
    assert not any(character.isdigit() for character in minted.reported_session_id)
    assert quote(matrix.fact.value) in minted.turns[-1].answer


def test_no_report_of_the_secret_in_id_run_shows_the_phone_number(tmp_path):
    """`handoff run secret-in-id`, then its report in every format: the phone number the
    raw step used as its id is in the stored record (the evidence), and in none of them."""
    phone = "4155550123"
    runs = ["--runs-dir", str(tmp_path / "runs")]
    ran = subprocess.run([sys.executable, "-m", "handoff", "run", "secret-in-id", "--json", str(tmp_path / "run.json"),
                          "--html", str(tmp_path / "run.html"), *runs], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    [stored] = (tmp_path / "runs").glob("*/run.json")
    assert phone in stored.read_text(encoding="utf-8")  # the record keeps what was observed
    shown = {"handoff run": ran.stdout + ran.stderr, "--json": (tmp_path / "run.json").read_text(encoding="utf-8"),
             "--html": (tmp_path / "run.html").read_text(encoding="utf-8")}

    def report(*args: str) -> str:  # in this process: a report starts nothing, and ten interpreters cost ~5 s
        done = CliRunner().invoke(app, ["report", *args, *runs])
        assert done.exit_code == 0, done.output
        return done.stdout

    for form in ("table", "markdown", "json", "html"):
        shown[form] = report("--format", form)
        written = tmp_path / f"report.{form}"
        report("--format", form, "-o", str(written))
        shown[f"{form} -o"] = written.read_text(encoding="utf-8")
    for form in ("table", "markdown"):
        shown[f"{form} --wide"] = report("--format", form, "--wide")
    assert {form: text.count(phone) for form, text in shown.items()} == dict.fromkeys(shown, 0)
    assert "cust…(redacted: phone number)" in shown["html"] and "cust…(redacted: phone number)" in shown["json"]


def test_bob_learns_nothing_from_creating_alices_id(matrix):
    steps = matrix.steps("existence-oracle")
    assert _refusal(steps["bob-alices-id"]) == _refusal(steps["bob-unused-id"])
    assert not steps["bob-alices-id"].turns and not steps["bob-unused-id"].turns
    assert quote(matrix.fact.value) not in steps["bob-own-id"].turns[0].answer


def test_a_guarded_most_recent_shows_bob_nothing_and_his_raw_turn_is_caught_later(matrix):
    steps = matrix.steps("foreign-most-recent")
    assert "no sessions to resume" in steps["bob-guarded"].failures[0].message
    assert quote(matrix.fact.value) in steps["bob-raw"].turns[0].answer
    assert "extended without a receipt" in _refusal(steps["alice-again"])


def test_concurrent_resume_forks_raw_and_not_guarded(matrix):
    steps = matrix.steps("concurrent-resume")
    raw_log = steps["raw"].eventlog
    # Measured on runtime 1.0.102: both resumes hang off the same parent event (a fork),
    # and neither records alreadyInUse, so the runtime's own flag cannot be relied on.
    assert raw_log.branch_points >= 1 and raw_log.resumes >= 2
    assert len(steps["raw"].turns) == 2  # both runtimes answered
    assert "lease" in _refusal(steps["guarded"])
    assert steps["guarded"].eventlog.branch_points == 0  # the guarded session's log did not fork


def test_tampered_log_is_trusted_raw_and_refused_guarded(matrix):
    steps = matrix.steps("tamper")
    assert TAMPERED_VALUE in steps["raw"].turns[0].answer
    assert "edited: event" in _refusal(steps["guarded"])


def test_stale_lease_blocks_only_until_it_expires(matrix):
    steps = matrix.steps("stale-lease-after-crash")
    assert steps["holder"].killed_on_purpose
    assert "lease" in _refusal(steps["too-soon"])
    assert quote(matrix.fact.value) in steps["later"].turns[0].answer
