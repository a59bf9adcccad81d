"""A home's event logs and a store's registry are input the tool did not write: a time
without its zone, text that is not UTF-8, a registry of another shape or a damaged file
each give a listing or a clear error (exit 0 or 2), never a failure of the tool."""

from __future__ import annotations

import re
import sqlite3

import pytest
from typer.testing import CliRunner

from handoff.cli import app
from handoff.stores.database import connect, sqlite_url
from handoff.stores.registry import Registry
from tests.unit.test_hostile_runs import crashed
from tests.unit.test_sessions_list import event, write_session


def listed(where) -> tuple[int, str, object]:
    done = CliRunner().invoke(app, ["sessions", "list", str(where)])
    assert "Traceback" not in done.output and not crashed(done), done.exception
    return done.exit_code, done.output, done.exception


def test_a_log_mixing_times_with_and_without_a_zone_is_listed(tmp_path):
    write_session(tmp_path, "mixed", event("session.start", "2026-01-01T00:00:00Z", sessionId="mixed"),
                  event("user.message", "2026-01-01T00:00:01Z", content="hello"),
                  event("assistant.message", "2026-01-01T00:00:02", content="OK"))  # no zone: taken as UTC
    code, output, _ = listed(tmp_path)
    assert code == 0 and "mixed" in output


def registry(path) -> sqlite3.Connection:
    database = connect(sqlite_url(path))
    Registry(database).created("s-1", "alice", "host-a", "1.0.102", "1.0.25")
    database.close()
    return sqlite3.connect(path)


def test_text_that_is_not_utf8_in_a_registry_is_shown_replaced(tmp_path):
    with registry(tmp_path / "store.db") as raw:
        raw.execute("UPDATE session_registry SET owner = CAST(x'ff' AS TEXT)")
    code, output, _ = listed(tmp_path / "store.db")
    assert code == 0 and "s-1" in output and "\ufffd" in output


def test_a_registry_of_another_shape_or_a_damaged_file_is_a_clear_error(tmp_path):
    narrow = tmp_path / "narrow.db"
    with sqlite3.connect(narrow) as raw:
        raw.execute("CREATE TABLE session_registry (session_id TEXT)")
    code, output, _ = listed(narrow)
    assert code == 2 and "cannot read the session registry" in output and "owner" in output
    damaged = tmp_path / "damaged.db"
    registry(damaged).close()
    with open(damaged, "r+b") as file:  # the registry's page overwritten, the header kept
        file.seek(4096 * 1)
        file.write(b"\xff" * 4096)
    code, output, _ = listed(damaged)
    assert code == 2 and ("cannot read the session registry" in output or "cannot open" in output), output


@pytest.mark.parametrize("lines", [b"{}\n" * 1_001, b'{"a": [' + b"0," * 1_000 + b'0]}\n'],
                         ids=["many tiny lines", "one line of many values"])
def test_a_log_of_more_values_than_a_session_writes_is_refused_unread(tmp_path, monkeypatch, lines):
    from handoff import eventlog

    monkeypatch.setattr(eventlog, "MAX_LOG_VALUES", 1_000)  # the bound, not its size, is what is tested
    folder = write_session(tmp_path, "tiny-values", event("session.start", "2026-01-01T00:00:00Z"))
    (folder / "events.jsonl").write_bytes(lines)
    code, output, _ = listed(tmp_path)
    assert code == 0 and "tiny-values" in output
    assert re.search(r"cannot read events.jsonl: it has [12],0\d\d", " ".join(output.split())), output


def test_a_log_stamped_at_the_latest_time_is_listed_in_every_time_zone(tmp_path, monkeypatch):
    import time

    write_session(tmp_path, "late", event("session.start", "9999-12-31T23:59:59Z", sessionId="late"),
                  event("user.message", "9999-12-31T23:59:59Z", content="hello"))
    for zone in ("Asia/Tokyo", "Pacific/Kiritimati", "America/Adak"):
        monkeypatch.setenv("TZ", zone)
        time.tzset()
        try:
            code, output, _ = listed(tmp_path)
        finally:
            monkeypatch.delenv("TZ")
            time.tzset()
        assert code == 0 and "late" in output, (zone, output)


def test_a_registry_of_more_rows_than_listed_shows_the_most_recent(tmp_path, monkeypatch):
    from handoff.stores import registry as registry_module

    monkeypatch.setattr(registry_module, "MAX_LISTED", 5)  # the bound, not its size, is what is tested
    monkeypatch.setattr(registry_module, "_MOST_RECENT_FIRST", registry_module._MOST_RECENT_FIRST.replace("10000", "5"))
    monkeypatch.setattr("handoff.stores.shared.MAX_LISTED", 5)
    monkeypatch.setattr("handoff.app.sessions.MAX_LISTED", 5)
    with registry(tmp_path / "store.db") as raw:
        raw.executemany("INSERT INTO session_registry (session_id, owner, created_at, created_on, runtime_version) "
                        "VALUES (?, 'alice', ?, 'h', '1.0.102')", [(f"s-{n:02}", 1e9 + n) for n in range(20)])
    code, output, _ = listed(tmp_path / "store.db")
    assert code == 0 and "the registry may hold more" in " ".join(output.split())
    # s-1, made as the test began, is the most recent; then those of the latest times
    assert sorted(set(re.findall(r"\bs-\d+\b", output))) == ["s-1", "s-16", "s-17", "s-18", "s-19"]


def test_an_id_longer_than_any_is_shown_as_such_not_read_whole(tmp_path):
    with registry(tmp_path / "store.db") as raw:
        raw.execute("UPDATE session_registry SET session_id = ?, summary = ?", ("x" * 100_000, "y" * 100_000))
    code, output, _ = listed(tmp_path / "store.db")
    assert code == 0 and "(too long)" in output and "xxxxxxxxxx" not in output and "yyyyyyyyyy" not in output
