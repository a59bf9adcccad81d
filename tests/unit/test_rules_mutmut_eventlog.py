"""Reading a session's event log, pinned exactly (mutmut survivors): a log of as many
values as the bound is read, one more is refused naming its file; a time stamped with a
Z is read as UTC, also where it has no time of day."""

from __future__ import annotations

import errno

import pytest

from handoff import eventlog
from handoff.bounded_read import Refused, values_in
from handoff.eventlog import read_events, summarize


def test_a_log_of_exactly_the_bound_s_values_is_read_and_one_more_is_refused_naming_the_file(tmp_path, monkeypatch):
    """The bound is "at most": a log of that many values is read; one over it is refused,
    the refusal naming the file and saying how many values it has."""
    path = tmp_path / "events.jsonl"
    log = b'{"type": "session.start"}\n{"type": "user.message"}\n'
    path.write_bytes(log)
    monkeypatch.setattr(eventlog, "MAX_LOG_VALUES", values_in(log))
    assert read_events(path) == ([{"type": "session.start"}, {"type": "user.message"}], 0)
    monkeypatch.setattr(eventlog, "MAX_LOG_VALUES", values_in(log) - 1)
    with pytest.raises(Refused) as refused:
        read_events(path)
    assert (refused.value.errno, refused.value.filename, refused.value.strerror) == (
        errno.EFBIG, str(path), "it has 5 commas, brackets and lines, more than a session's log (4 at most)")


def test_a_day_stamped_with_a_z_and_no_time_of_day_is_that_day_s_midnight_utc():
    """"2026-12-05Z" reads as midnight UTC (the Z taken as +00:00), so the reply time
    from it to a time that day is counted."""
    events = [{"type": "user.message", "timestamp": "2026-12-05Z", "data": {"content": "q"}},
              {"type": "assistant.message", "timestamp": "2026-12-05T00:00:01Z", "data": {"content": "a"}}]
    assert summarize(events).last_reply_ms == 1000
