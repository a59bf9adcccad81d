"""`handoff chat`'s pure parts: the accounts derived from the store's key, the store
folder's checks, and the conversation read back from an event log."""

from __future__ import annotations

import json
import os

import pytest

from handoff.chat.accounts import LOGIN_SECONDS, Accounts
from handoff.chat.store import KEY_FILE, chat_store
from handoff.errors import UserError
from handoff.eventlog import messages

USERS = ("alice", "bob")


def accounts(key: bytes = b"k" * 32, now: float = 1_000.0) -> Accounts:
    return Accounts(key, USERS, clock=lambda: now)


def test_a_password_is_the_store_s_own_and_stays_with_it():
    assert accounts().password("alice") == accounts().password("alice")  # a server started again
    assert accounts().password("alice") != accounts().password("bob")
    assert accounts().password("alice") != accounts(b"j" * 32).password("alice")  # another store


def test_a_login_names_its_user_until_it_expires_and_only_as_signed():
    given = accounts().log_in("alice", accounts().password("alice"))
    assert accounts().user_of(given) == "alice"
    assert accounts(now=1_000.0 + LOGIN_SECONDS + 1).user_of(given) is None
    user, expires, tag = given.split(".")
    assert accounts().user_of(f"bob.{expires}.{tag}") is None  # another user's name on alice's login
    assert accounts().user_of(f"{user}.{int(expires) + 9_999}.{tag}") is None  # a later expiry
    assert accounts(b"j" * 32).user_of(given) is None  # another store's server
    for nonsense in (None, "", "alice", "alice..", "carol.9999999999.00"):
        assert accounts().user_of(nonsense) is None


def test_a_wrong_password_and_an_unknown_user_get_the_same_answer():
    assert accounts().log_in("alice", accounts().password("bob")) is None
    assert accounts().log_in("carol", accounts().password("alice")) is None
    assert accounts().log_in("carol", accounts().password("")) is None
    assert accounts().log_in("alice", "é" * 12) is None


def test_a_new_folder_becomes_a_store_with_a_key_only_its_owner_reads(tmp_path):
    store = chat_store(tmp_path / "new")
    assert (store.folder / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert chat_store(tmp_path / "new").key() == store.key()  # the same key when it is opened again


@pytest.mark.parametrize("kind", ["a file", "a folder of other files", "a key of another length"])
def test_what_is_not_a_chat_store_is_refused_and_left_as_it_was(tmp_path, kind):
    where = tmp_path / "store"
    if kind == "a file":
        where.write_text("mine")
    else:
        where.mkdir()
        (where / ("notes.txt" if kind == "a folder of other files" else KEY_FILE)).write_bytes(b"short")
    before = sorted(os.listdir(where)) if where.is_dir() else where.read_text()
    with pytest.raises(UserError, match="--store"):
        chat_store(where)
    assert (sorted(os.listdir(where)) if where.is_dir() else where.read_text()) == before


def test_a_folder_that_cannot_be_written_is_refused(tmp_path):
    if os.geteuid() == 0:
        where = tmp_path / "file" / "below"  # a folder under a file: no permission needed to fail
        (tmp_path / "file").write_text("")
    else:
        (tmp_path / "locked").mkdir(mode=0o500)
        where = tmp_path / "locked" / "store"
    with pytest.raises(UserError, match="cannot keep sessions there"):
        chat_store(where)


def event(kind: str, content) -> dict:
    return {"type": kind, "data": {"content": content}}


def test_the_conversation_is_the_prompts_and_answers_with_text_in_order():
    log = [event("session.start", None), event("user.message", "hi"), event("assistant.message", ""),
           {"type": "tool.execution_start", "data": {}}, event("assistant.message", "hello"),
           event("user.message", 7), event("user.message", "")]
    assert messages(json.loads(json.dumps(log))) == [("user", "hi"), ("assistant", "hello"), ("user", "")]


def test_the_doctor_says_when_the_web_app_s_rungs_are_skipped_and_how_to_mend_it(monkeypatch):
    from handoff import doctor
    from handoff.chat import browser

    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    line = doctor._browser()
    assert line.status == doctor.MISSING and "a step in a browser needs chromium" in line.detail
    assert line.detail.endswith("the web app's rungs are skipped")
    assert "tools/ensure-system-packages" in line.fix
