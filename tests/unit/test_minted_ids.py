"""Ids the tool mints carry no secret, so nothing that shows them may have to hide one:
a random part of digits only would read as a card or account number (the lab printed
such an id hidden, and `--resume` with what it printed was refused)."""

from __future__ import annotations

import uuid

from handoff import session_ids
from handoff.guard.ids import shown
from handoff.lab.options import new_lab_session_id


def test_a_random_part_of_digits_only_is_drawn_again(monkeypatch):
    draws = iter([uuid.UUID(hex="7427941597484691" * 2), uuid.UUID("0123456789abcdef0123456789abcdef")])
    monkeypatch.setattr(session_ids.uuid, "uuid4", lambda: next(draws))
    assert session_ids.new_session_id("sdklabs") == "sdklabs-0123456789abcdef"


def test_minted_ids_are_shown_as_they_are():
    ids = [new_lab_session_id() for _ in range(5_000)] + [session_ids.new_session_id() for _ in range(5_000)]
    assert [i for i in ids if shown(i) != i] == []
