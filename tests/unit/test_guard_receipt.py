"""Receipts detect every kind of change to an event log; an untouched log passes."""

import json

from handoff.guard.receipt import Receipt, changes_since

LOG = "".join(json.dumps({"id": str(n), "type": "event", "data": {"n": n}}) + "\n" for n in range(6))


def test_untouched_log_passes_and_survives_serialisation():
    receipt = Receipt.from_json(Receipt.of(LOG).to_json())
    assert receipt.event_count == 6
    assert changes_since(receipt, LOG) is None


def test_edited_event_is_named():
    edited = LOG.replace('"n": 3}', '"n": 33}')
    assert changes_since(Receipt.of(LOG), edited) == "edited: event 4 of 6 differs from the receipt"


def test_truncation_and_rollback_are_detected():
    lines = LOG.splitlines(keepends=True)
    assert "2 of 6 events are gone" in changes_since(Receipt.of(LOG), "".join(lines[:4]))
    assert "6 of 6 events are gone" in changes_since(Receipt.of(LOG), "")


def test_events_appended_without_a_receipt_are_detected():
    extended = LOG + json.dumps({"id": "x"}) + "\n"
    assert changes_since(Receipt.of(LOG), extended) == (
        "extended without a receipt: 1 events were appended after the last close"
    )


def test_reordered_events_are_detected():
    lines = LOG.splitlines(keepends=True)
    swapped = "".join([lines[1], lines[0], *lines[2:]])
    assert changes_since(Receipt.of(LOG), swapped).startswith("edited: event 1")
