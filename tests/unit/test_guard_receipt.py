"""Receipts detect every kind of change to an event log's bytes; an untouched log passes."""

import json

import pytest

from handoff.guard.receipt import Receipt, ReceiptUnreadable, changes_since, lines_of

LOG = "".join(json.dumps({"id": str(n), "type": "event", "data": {"n": n}}) + "\n" for n in range(6)).encode()
LINES = LOG.split(b"\n")[:-1]


def joined(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def test_untouched_log_passes_and_survives_serialisation():
    receipt = Receipt.from_json(Receipt.of(LOG).to_json())
    assert receipt.event_count == 6
    assert changes_since(receipt, LOG) is None


@pytest.mark.parametrize("index", [0, 3, 5])
def test_an_edit_of_any_event_first_middle_or_last_is_named(index):
    edited = LINES.copy()
    edited[index] = edited[index].replace(b'"n": ', b'"n": 1')
    assert changes_since(Receipt.of(LOG), joined(edited)) == f"edited: event {index + 1} of 6 differs from the receipt"


@pytest.mark.parametrize("joint", [b"\r", "\u2028".encode(), b"\x85", b"\x0b"])
def test_two_events_joined_by_another_line_break_are_not_two_events(joint):
    """str.splitlines cuts at all of these; the runtime cuts at \\n only."""
    merged = joined([*LINES[:2], LINES[2] + joint + LINES[3], *LINES[4:]])
    change = changes_since(Receipt.of(LOG), merged)
    assert change is not None and change.startswith("edited: event 3")


def test_a_windows_line_ending_is_a_change():
    assert changes_since(Receipt.of(LOG), LOG.replace(b"\n", b"\r\n")).startswith("edited: event 1")


def test_truncation_and_rollback_are_detected():
    assert "2 of 6 events are gone" in changes_since(Receipt.of(LOG), joined(LINES[:4]))
    assert "6 of 6 events are gone" in changes_since(Receipt.of(LOG), b"")


def test_events_appended_without_a_receipt_are_detected():
    extended = LOG + json.dumps({"id": "x"}).encode() + b"\n"
    assert changes_since(Receipt.of(LOG), extended) == (
        "extended without a receipt: 1 events were appended after the last close"
    )


def test_reordered_events_are_detected():
    swapped = joined([LINES[1], LINES[0], *LINES[2:]])
    assert changes_since(Receipt.of(LOG), swapped).startswith("edited: event 1")


def test_a_final_newline_does_not_make_an_event_but_a_missing_one_is_a_change():
    assert lines_of(b"a\nb\n") == [b"a", b"b"] and lines_of(b"a\nb") == [b"a", b"b"]
    assert lines_of(b"a\n\nb\n") == [b"a", b"", b"b"]  # a blank line is a line: removing it is a change


@pytest.mark.parametrize("stored", ["not json", "[]", '{"event_count": 2, "links": ["x"]}',
                                    '{"event_count": 1}', '{"event_count": 1, "links": [7]}'])
def test_a_receipt_that_cannot_be_read_is_an_error_not_a_pass(stored):
    with pytest.raises(ReceiptUnreadable):
        Receipt.from_json(stored)


def test_a_missing_final_newline_is_a_change():
    """Found by Hypothesis: the lines are the same, but the runtime's next append would
    run into the last event."""
    assert changes_since(Receipt.of(LOG), LOG[:-1]) == (
        "edited: the events are the same but the log's bytes are not (its final line ending)")


def test_an_unreadable_receipt_says_what_is_wrong():
    with pytest.raises(ReceiptUnreadable, match=r"^the stored receipt cannot be read \(JSONDecodeError\)$"):
        Receipt.from_json("{")
    good = Receipt.of(LOG)
    wrong_count = json.dumps({"event_count": 5, "links": list(good.links), "digest": good.digest})
    with pytest.raises(ReceiptUnreadable, match=r"^the stored receipt is not consistent with itself$"):
        Receipt.from_json(wrong_count)
    not_a_hash = json.dumps({"event_count": 6, "links": [list(range(64))] + list(good.links[1:]), "digest": good.digest})
    with pytest.raises(ReceiptUnreadable):
        Receipt.from_json(not_a_hash)


def test_a_receipt_whose_hashes_are_not_sha256_hex_is_unreadable_not_a_mismatch():
    """A link or digest of another length is no receipt the gate made: refused as
    unreadable (fail closed, saying so), never compared as if it were one."""
    good = Receipt.of(LOG)
    for links, digest in (([good.links[0][:63]] + list(good.links[1:]), good.digest),
                          (list(good.links), good.digest + "0")):
        stored = json.dumps({"event_count": good.event_count, "links": links, "digest": digest})
        with pytest.raises(ReceiptUnreadable, match=r"^the stored receipt is not consistent with itself$"):
            Receipt.from_json(stored)


def test_hashes_are_compared_as_written_not_without_their_case():
    """The gate writes lower-case hex; a receipt in upper case was not written by it, and
    the log it names is not taken as unchanged."""
    good = Receipt.of(LOG)
    shouting_link = Receipt(good.event_count, (good.links[0].upper(), *good.links[1:]), good.digest)
    assert changes_since(shouting_link, LOG) == f"edited: event 1 of {good.event_count} differs from the receipt"
    shouting_digest = Receipt(good.event_count, good.links, good.digest.upper())
    assert changes_since(shouting_digest, LOG) == (
        "edited: the events are the same but the log's bytes are not (its final line ending)")
