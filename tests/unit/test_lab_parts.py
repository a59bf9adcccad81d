"""The lab's pure parts: its id recipe, option checks, and reading the runtime's errors."""

from __future__ import annotations

import re

import pytest

from handoff.protocol import Backend
from handoff.errors import UserError
from handoff.fact import Fact
from handoff.lab import LabOptions, new_lab_session_id, runtime_message

WITNESS = Backend("witness", "handoff-witness")


def test_ids_follow_the_labs_recipe():
    ids = {new_lab_session_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"sdklabs-[0-9a-f]{16}", i) and len(i) == 24 for i in ids)


@pytest.mark.parametrize("overrides, message", [
    ({"resume": "a", "session_id": "b"}, "--resume and --session-id choose the session in different ways"),
    ({"resume": "a", "resume_most_recent": True}, "--resume and --resume-most-recent"),
    ({"session_id": "a", "resume_most_recent": True}, "--session-id and --resume-most-recent"),
    ({"session_id": "../escape"}, "--session-id: an id is"),
    ({"resume": "has space"}, "--resume: an id is"),
    ({"fact": Fact(" ", "t")}, "--fact and --topic must not be empty"),
])
def test_contradictory_or_malformed_options_are_refused(tmp_path, overrides, message):
    options = LabOptions(**{"backend": WITNESS, "fact": Fact(), "home": tmp_path, **overrides})
    with pytest.raises(UserError, match=re.escape(message)):
        options.check()


def test_a_home_that_is_a_file_is_refused(tmp_path):
    file = tmp_path / "home"
    file.write_text("")
    with pytest.raises(UserError, match="is not a directory"):
        LabOptions(WITNESS, Fact(), file).check()


def test_stable_and_generated_ids_pass(tmp_path):
    for overrides in ({}, {"session_id": "analyst-demo"}, {"resume": "sdklabs-0123456789abcdef"}, {"resume_most_recent": True}):
        LabOptions(**{"backend": WITNESS, "fact": Fact(), "home": tmp_path, **overrides}).check()


@pytest.mark.parametrize("raised, expected", [
    (Exception("JSON-RPC Error -32603: Request session.resume failed with message: "
               "Failed to load session events: Session not found: nope"),
     "Failed to load session events: Session not found: nope"),
    (Exception("Session error: Authentication failed with provider at http://h/v1 (HTTP 401).\n"
               "  Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN."),
     "Authentication failed with provider at http://h/v1 (HTTP 401)."),
    (TimeoutError(), "TimeoutError"),
])
def test_runtime_messages_are_unwrapped_onto_one_line(raised, expected):
    assert runtime_message(raised) == expected
