"""The database rungs on a real PostgreSQL (a throwaway embedded server)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def test_postgres_resume_ran_with_empty_homes_of_its_own(default_matrix):
    a, b = default_matrix.steps("cross-process-postgres").values()
    assert a.ready.home != b.ready.home
    assert a.ready.store.startswith("postgresql://") and b.record.store == "postgres"


def test_discovery_split_registry_finds_what_the_runtime_does_not(default_matrix):
    a, b = default_matrix.steps("discovery-split").values()
    actions = {e.action: e for e in b.actions}
    assert actions["list"].listed == ()
    assert actions["metadata"].found is False
    assert actions["discover"].registered == (a.reported_session_id,)
    assert b.reported_session_id == a.reported_session_id


def test_crash_during_write_leaves_no_torn_line(default_matrix):
    a, crashed, b = default_matrix.steps("crash-during-write").values()
    assert crashed.killed_on_purpose and not crashed.finished
    assert "append to /state/events.jsonl" in crashed.holding.during
    log = b.eventlog
    assert log.unreadable_lines == 0
    # the killed transaction left nothing: B loads exactly what A closed with
    assert log.resume_event_count == a.eventlog.events


def test_cross_machine_postgres_reached_the_database_over_the_lan(default_matrix):
    a, b = default_matrix.steps("cross-machine-postgres").values()
    assert (a.ready.hostname, b.ready.hostname) == ("host-a", "host-b")
    assert "127.0.0.1" not in b.ready.store
