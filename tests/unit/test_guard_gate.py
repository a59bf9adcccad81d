"""The gate on a real SQLite registry: owners, minted ids, receipts, leases, listings."""

import json

import pytest

from handoff.guard.gate import DENIED, EXISTS, Gate, Refused
from handoff.guard.ids import Minter
from handoff.guard.receipt import Receipt
from handoff.stores.database import connect
from handoff.stores.registry import Registry

KEY = b"app key " * 4
LOG = b"".join(json.dumps({"id": str(n), "type": "event"}).encode() + b"\n" for n in range(4))


@pytest.fixture
def registry(tmp_path):
    database = connect(f"sqlite:///{tmp_path / 'registry.db'}")
    yield Registry(database)
    database.close()


def gate(registry, owner="alice", holder=None, reuse=False) -> Gate:
    return Gate(registry, Minter(KEY, owner), holder or f"{owner}-worker", reuse)


def created(registry, owner="alice") -> str:
    """A session the owner created and closed with a receipt for LOG."""
    mine = gate(registry, owner)
    session_id = mine.minter.new()
    assert mine.admit_create(session_id) is False
    registry.created(session_id, owner, "h", "1.0.102")
    mine.take_lease(session_id)
    mine.closed(session_id, LOG)
    return session_id


def refusal(call) -> str:
    with pytest.raises(Refused) as refused:
        call()
    return str(refused.value)


def test_the_owner_resumes_her_closed_session(registry):
    session_id = created(registry)
    gate(registry).admit_resume(session_id, LOG)


@pytest.mark.parametrize("call", ["admit", "admit_resume"])
def test_bob_gets_the_same_words_for_alices_id_and_for_one_that_does_not_exist(registry, call):
    alices = created(registry)
    bob = gate(registry, "bob")
    never_created = bob.minter.new()  # minted for bob even: it names no session of his
    args = (LOG,) if call == "admit_resume" else ()
    assert refusal(lambda: getattr(bob, call)(alices, *args)) == DENIED
    assert refusal(lambda: getattr(bob, call)(never_created, *args)) == DENIED
    assert refusal(lambda: getattr(bob, call)("handoff-0123456789abcdef", *args)) == DENIED


def test_a_create_of_someone_elses_id_or_of_an_unminted_one_is_refused_alike(registry):
    alices = created(registry)
    bob = gate(registry, "bob")
    assert refusal(lambda: bob.admit_create(alices)) == refusal(lambda: bob.admit_create("analyst-demo"))
    assert bob.admit_create(bob.minter.new()) is False  # his own new id


def test_creating_her_own_existing_id_is_refused_unless_reused(registry):
    session_id = created(registry)
    assert refusal(lambda: gate(registry).admit_create(session_id)) == EXISTS
    assert gate(registry, reuse=True).admit_create(session_id) is True


@pytest.mark.parametrize("index", [0, 3])
def test_a_log_edited_at_its_first_or_last_event_is_refused(registry, index):
    session_id = created(registry)
    lines = LOG.split(b"\n")
    lines[index] = lines[index].replace(b"event", b"evenT")
    assert f"edited: event {index + 1} of 4" in refusal(lambda: gate(registry).admit_resume(session_id, b"\n".join(lines)))


def test_an_unreadable_receipt_refuses_the_resume(registry):
    session_id = created(registry)
    registry.record_receipt(session_id, "{not a receipt")
    assert "receipt cannot be checked" in refusal(lambda: gate(registry).admit_resume(session_id, LOG))


def test_a_second_writer_is_refused_while_the_lease_is_held(registry):
    session_id = created(registry)
    gate(registry, holder="first").admit_resume(session_id, LOG)
    assert "lease" in refusal(lambda: gate(registry, holder="second").admit_resume(session_id, LOG))


def test_only_the_lease_holder_writes_the_receipt(registry):
    session_id = created(registry)
    gate(registry, holder="first").admit_resume(session_id, LOG)
    stored = registry.receipt_of(session_id)
    assert "no receipt was written" in refusal(lambda: gate(registry, holder="second").closed(session_id, LOG + b"{}\n"))
    assert refusal(lambda: gate(registry, "bob").closed(session_id, LOG + b"{}\n")) == DENIED
    assert registry.receipt_of(session_id) == stored
    assert Receipt.from_json(stored).event_count == 4


def test_a_guarded_listing_shows_only_the_callers_own_sessions(registry):
    alices, bobs = created(registry), created(registry, "bob")
    assert gate(registry).visible([alices, bobs, "handoff-0123456789abcdef"]) == [alices]
    assert gate(registry, "bob").visible([alices, bobs]) == [bobs]


def test_the_refusals_say_exactly_why(registry):
    session_id = created(registry)
    assert refusal(lambda: gate(registry).admit_create("analyst-demo")) == (
        "session id refused: it was not minted for you by the app (the guarded path accepts only hs- and 40 letters g-v)")
    gate(registry, holder="first").admit_resume(session_id, LOG)
    assert refusal(lambda: gate(registry, holder="second").take_lease(session_id)) == (
        "another writer holds this session's lease: resume refused")
    assert refusal(lambda: gate(registry, holder="second").closed(session_id, LOG)) == (
        "this writer no longer holds the session's lease: no receipt was written")


def test_a_registry_that_names_another_owner_for_her_own_minted_id_is_denied(registry):
    """Only a tampered registry can say so; the gate refuses rather than trust either side,
    on every path: create, a reused create, a resume, and her listing, which leaves it out."""
    alice = gate(registry)
    session_id = alice.minter.new()
    registry.created(session_id, "bob", "h", "1.0.102")
    assert refusal(lambda: alice.admit_create(session_id)) == DENIED
    assert refusal(lambda: gate(registry, reuse=True).admit_create(session_id)) == DENIED
    assert refusal(lambda: alice.admit_resume(session_id, LOG)) == DENIED
    assert alice.visible([session_id]) == []  # minted for her, but the registry says bob's: not listed
    assert gate(registry, "bob").visible([session_id]) == []  # bob's by the registry, but not minted for him


def test_a_missing_log_after_a_receipt_is_a_rollback(registry):
    session_id = created(registry)
    assert "truncated or rolled back: 4 of 4 events are gone" in refusal(
        lambda: gate(registry).admit_resume(session_id, None))


def test_a_close_with_no_log_leaves_a_receipt_for_an_empty_one(registry):
    mine = gate(registry)
    session_id = mine.minter.new()
    registry.created(session_id, "alice", "h", "1.0.102")
    mine.take_lease(session_id)
    mine.closed(session_id, None)
    written = Receipt.from_json(registry.receipt_of(session_id))  # a receipt, for a log of no event
    assert written.event_count == 0
    gate(registry).admit_resume(session_id, b"")
    assert "extended" in refusal(lambda: gate(registry).admit_resume(session_id, LOG))  # a log that came after it


def test_a_session_she_made_raw_is_not_in_her_guarded_listing(registry):
    registry.created("handoff-0123456789abcdef", "alice", "h", "1.0.102")  # owned, but never minted
    assert gate(registry).visible(["handoff-0123456789abcdef"]) == []


def test_the_lease_is_renewed_while_open_and_renewal_stops_at_close(registry, monkeypatch):
    import asyncio

    from handoff.guard import gate as gates

    monkeypatch.setattr(gates, "LEASE_SECONDS", 0.15)
    session_id = created(registry)

    async def hold_then_close() -> tuple[float, float, object]:
        mine = gate(registry, holder="keeper")
        mine.admit_resume(session_id, LOG)
        taken = registry.lease_holder(session_id)[1]
        mine.keep_lease(session_id)
        await asyncio.sleep(0.25)  # past the first lease: only a renewal keeps it
        renewed = registry.lease_holder(session_id)[1]
        mine.closed(session_id, LOG)
        await asyncio.sleep(0.12)  # a renewal that were still running would take the lease back
        return taken, renewed, registry.lease_holder(session_id)

    taken, renewed, after_close = asyncio.run(hold_then_close())
    assert renewed > taken
    assert after_close is None


def test_on_a_clock_that_stands_still_a_lease_outlives_any_wall_time(registry, monkeypatch):
    """The coordinator's lease clock: a contender that is slow to start finds the lease as
    live as it was when the holder died, however long the start took."""
    import time

    from handoff.guard import gate as gates

    monkeypatch.setattr(gates, "LEASE_SECONDS", 0.1)
    session_id = created(registry)
    holder = Gate(registry, Minter(KEY, "alice"), "holder", False, clock=lambda: 100.0)
    holder.admit_resume(session_id, LOG)
    time.sleep(0.2)  # twice the lease on the wall clock
    slow = Gate(registry, Minter(KEY, "alice"), "slow", False, clock=lambda: 100.0)
    assert "another writer holds this session's lease" in refusal(lambda: slow.admit_resume(session_id, LOG))
    later = Gate(registry, Minter(KEY, "alice"), "later", False, clock=lambda: 100.2)
    later.admit_resume(session_id, LOG)
    assert registry.lease_holder(session_id)[0] == "later"


def test_an_id_she_owns_but_that_was_not_minted_for_her_is_refused_on_every_path(registry):
    """Both rules hold on each path, each on its own: the registry's owner alone admits nothing."""
    registry.created("handoff-0123456789abcdef", "alice", "h", "1.0.102")  # owned, but never minted
    alice = gate(registry)
    assert refusal(lambda: alice.admit("handoff-0123456789abcdef")) == DENIED
    assert refusal(lambda: alice.admit_resume("handoff-0123456789abcdef", LOG)) == DENIED
    assert refusal(lambda: gate(registry, reuse=True).admit_create("handoff-0123456789abcdef")) != EXISTS
    assert alice.visible(["handoff-0123456789abcdef"]) == []


def test_a_principal_differing_only_in_case_is_another_principal(registry):
    """Minted for "Alice", registered to "alice": two principals, on every path."""
    upper = gate(registry, "Alice")
    session_id = upper.minter.new()
    registry.created(session_id, "alice", "h", "1.0.102")
    assert refusal(lambda: upper.admit(session_id)) == DENIED
    assert refusal(lambda: upper.admit_resume(session_id, LOG)) == DENIED
    assert refusal(lambda: gate(registry, "Alice", reuse=True).admit_create(session_id)) == DENIED
    assert upper.visible([session_id]) == []


def test_a_close_with_no_lease_held_or_by_a_holder_differing_in_case_writes_no_receipt(registry):
    session_id = created(registry)  # closed: its lease released
    stored = registry.receipt_of(session_id)
    assert "no receipt was written" in refusal(lambda: gate(registry, holder="first").closed(session_id, LOG + b"{}\n"))
    gate(registry, holder="first").admit_resume(session_id, LOG)
    assert "no receipt was written" in refusal(lambda: gate(registry, holder="First").closed(session_id, LOG + b"{}\n"))
    assert registry.receipt_of(session_id) == stored
