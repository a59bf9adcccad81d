"""`handoff conform` on providers written outside the package, with the real runtime: a
correct provider on files keeps every required row; one whose append overwrites fails the
append row and every resume; a process-local one resumes in its own process and not in a
new one, saying why; one that keeps only the event log where another process finds it
resumes everywhere and loses the session's other files; the project's PostgreSQL store
keeps every required row. Exits 0, 1, 1, 1, 0. No provider makes a runtime with a home of its own find the session (discovery, an
optional row): the runtime's index of sessions is in its home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def conform(spec: str, tmp_path: Path, **env: str) -> tuple[int, dict[str, str], str]:
    done = subprocess.run([sys.executable, "-m", "handoff", "conform", spec], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "200", "FILES_PROVIDER_ROOT": str(tmp_path),
                                            **env})
    rows = {}
    for line in done.stdout.splitlines():
        for outcome in (" ok ", " fail ", " unknown "):
            if outcome in line and not line.startswith(" "):
                rows[line.split(outcome)[0].strip()] = outcome.strip()
    return done.returncode, rows, done.stdout + done.stderr


DISCOVERY = "discovery, new home (optional)"
UNDISCOVERED = "list_sessions does not list it and get_session_metadata returns None"


FILES = "the session's files, new process"
KILLED = "resume after a kill mid-turn"
COST = "cost, 10 and 200 turns"
LEASED = "two resumers, the guard's lease"
# Optional, and failing for every provider that takes both writers' turns: the runtime forks the log
TWO = "two resumers at once (optional)"
FORKED = "both wrote, and the log forks at 1 point(s): the provider lets a second writer in"
OPTIONAL = [TWO, DISCOVERY]


def kept_every_required_row(code: int, rows: dict[str, str], said: str) -> None:
    assert code == 0 and len(rows) == 22, said
    assert [name for name, outcome in rows.items() if outcome != "ok"] == OPTIONAL, said
    assert UNDISCOVERED in said and FORKED in said and "20 of 20 required rows hold" in said
    assert "the superseded writer was told: Exception: Session error: Failed to persist session events" in " ".join(
        said.split())  # the runtime's own words, wrapped in the table
    assert "every file reads back as written. A turn: 1 call(s)" in said and "bytes per turn" in said


def test_a_correct_provider_keeps_every_row(tmp_path):
    code, rows, said = conform("examples.files_provider:factory", tmp_path)
    kept_every_required_row(code, rows, said)
    assert "Traceback" not in said


def test_an_append_that_overwrites_fails_the_append_row_and_every_resume(tmp_path):
    code, rows, said = conform("examples.overwriting_provider:factory", tmp_path)
    assert code == 1, said
    assert {name for name, outcome in rows.items() if outcome != "ok"} == {
        "append appends", "resume, same process", "resume, new process", "compaction, then new process", KILLED,
        LEASED, COST, *OPTIONAL}, said
    assert "after 10 turns, /state/events.jsonl reads back" in said  # the last turn's append, not the ten
    assert rows[FILES] == "ok"  # what it overwrote, it overwrote for every process alike


def test_a_process_local_provider_resumes_in_its_process_only(tmp_path):
    code, rows, said = conform("tests.e2e.providers.memory_provider:factory", tmp_path)
    assert code == 1 and rows["resume, same process"] == "ok" and rows["resume, new process"] == "fail", said
    assert "a new process, with a home of its own, could not resume it through the provider" in said
    assert [name for name, outcome in rows.items() if outcome != "ok"] == [
        "resume, new process", "compaction, then new process", FILES, *OPTIONAL]  # the kill's resume is in-process


def test_a_provider_that_keeps_only_the_event_log_resumes_but_loses_the_session_s_other_files(tmp_path):
    code, rows, said = conform("tests.e2e.providers.log_only_provider:factory", tmp_path)
    assert code == 1 and [name for name, outcome in rows.items() if outcome != "ok"] == [FILES, *OPTIONAL], said
    assert "a new process finds missing there:" in said and "state/workspace.yaml" in said


def test_the_project_s_postgresql_store_keeps_every_row(tmp_path, postgres_url):
    code, rows, said = conform("tests.e2e.providers.store_provider:factory", tmp_path,
                               HANDOFF_CONFORM_STORE=postgres_url)
    kept_every_required_row(code, rows, said)


def test_without_the_guard_s_fence_the_superseded_writer_s_turn_becomes_durable(tmp_path, monkeypatch):
    """The lease row can fail: with the fence letting every writer through, the writer whose
    lease was taken over is answered and its turn is appended after the new holder's close."""
    from examples import files_provider
    from handoff.conform import lease
    from handoff.fact import Fact
    from handoff.guard.fence import Fence

    monkeypatch.setenv("FILES_PROVIDER_ROOT", str(tmp_path))
    monkeypatch.setattr(Fence, "check", lambda self, change: None)
    moved = lease.superseded(files_provider.factory, Fact())
    assert moved.problem is None and moved.kept_by_second and moved.changed_after and moved.first_told == "an answer"
