"""The coordinator's lease clock on a real SQLite registry: it stands still until a step
asks for the session's lease to run out, then moves just past the end it reads there."""

from handoff.coordinator.lease_clock import LeaseClock
from handoff.guard.gate import LEASE_SECONDS
from handoff.stores.database import connect, sqlite_url
from handoff.stores.registry import Registry


def registry_with_lease(tmp_path, holder: str | None, at: float):
    url = sqlite_url(tmp_path / "registry.db")
    database = connect(url)
    registry = Registry(database)
    if holder:
        assert registry.take_lease("s1", holder, LEASE_SECONDS, now=at)
    database.close()
    return url


def test_the_clock_moves_past_the_lease_it_reads_and_says_whose_it_was(tmp_path):
    url = registry_with_lease(tmp_path, "host:42", at=0.0)
    clock = LeaseClock()
    expiry = clock.run_out(url, "s1")
    assert clock.now > LEASE_SECONDS and expiry.expired_at == LEASE_SECONDS and expiry.holder == "host:42"
    assert expiry.note() == (f"lease clock 0 s -> {clock.now:g} s: the coordinator saw the lease of host:42 end at "
                             f"{LEASE_SECONDS:g} s before this step started")
    reopened = Registry(connect(url))
    assert reopened.take_lease("s1", "next", LEASE_SECONDS, now=clock.now)  # free at the clock's new time
    assert not Registry(connect(url)).take_lease("s1", "third", LEASE_SECONDS, now=clock.now)  # and taken now


def test_without_a_lease_the_clock_stays_and_the_note_says_there_was_none(tmp_path):
    url = registry_with_lease(tmp_path, None, at=0.0)
    clock = LeaseClock()
    clock.now = 7.0
    expiry = clock.run_out(url, "s1")
    assert clock.now == 7.0 and expiry.holder is None
    assert "had no lease to run out" in expiry.note()


def test_the_clock_never_goes_back(tmp_path):
    url = registry_with_lease(tmp_path, "old", at=0.0)
    clock = LeaseClock()
    clock.now = 50.0
    clock.run_out(url, "s1")
    assert clock.now == 50.0


def test_a_store_with_no_registry_has_no_lease(tmp_path):
    clock = LeaseClock()
    assert clock.run_out(sqlite_url(tmp_path / "empty.db"), "s1").holder is None
    assert clock.run_out(None, "s1").holder is None
