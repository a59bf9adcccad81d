"""The registry on SQLite: owners, receipts, and single-writer leases."""

import time

from handoff.stores.database import connect
from handoff.stores.registry import Registry


def registry(tmp_path):
    return Registry(connect(f"sqlite:///{tmp_path / 'r.db'}"))


def test_owner_and_receipt(tmp_path):
    r = registry(tmp_path)
    r.created("s1", "alice", "host-a", "1.0.102")
    assert r.owner_of("s1") == "alice" and r.owner_of("nope") is None
    r.record_receipt("s1", '{"event_count": 1, "links": ["x"]}')
    assert r.receipt_of("s1") == '{"event_count": 1, "links": ["x"]}'


def test_a_live_lease_refuses_a_second_holder_until_it_expires(tmp_path):
    r = registry(tmp_path)
    assert r.take_lease("s1", "worker-a", 3, now=0)
    assert not r.take_lease("s1", "worker-b", 3, now=2.9)
    assert r.take_lease("s1", "worker-a", 3, now=2.9)  # renewal by the holder: now until 5.9
    assert not r.take_lease("s1", "worker-b", 3, now=5.9)  # live up to its end
    assert r.take_lease("s1", "worker-b", 3, now=6.0)  # the expired lease is taken over
    assert r.lease_holder("s1") == ("worker-b", 9.0)


def test_without_a_clock_leases_run_on_the_wall_clock(tmp_path):
    r = registry(tmp_path)
    assert r.take_lease("s1", "worker-a", 0.3)
    assert not r.take_lease("s1", "worker-b", 0.3)
    time.sleep(0.35)
    assert r.take_lease("s1", "worker-b", 0.3)


def test_release_frees_the_lease_only_for_its_holder(tmp_path):
    r = registry(tmp_path)
    r.take_lease("s1", "worker-a", 30)
    r.release_lease("s1", "worker-b")
    assert not r.take_lease("s1", "worker-b", 30)
    r.release_lease("s1", "worker-a")
    assert r.take_lease("s1", "worker-b", 30)
