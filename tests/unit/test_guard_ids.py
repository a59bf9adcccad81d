"""Id rules and minted ids: the pattern rules name what an id carries without quoting
it; only ids minted for the caller pass the guarded path."""

import pytest

from handoff.guard.ids import MAX_LENGTH, MINTED, IdRejected, Minter, check_session_id, not_minted, shown

ACCEPTED = [
    "analyst-demo",
    "sdklabs-75e6b8f216d0451b",
    "acme-case-1001-7f3a",
    "tenant.42_case-9",
    "handoff-0123456789abcdef",
    "build-v123456789",  # 9 digits after a letter that is part of a word with digits: a build number
    "quarterly-review-of-the-north-west-store",  # a readable lowercase id of 40 characters is not base64
    "x" * MAX_LENGTH,
]

REFUSED = {
    "alice@example.com-chat": "contains an e-mail address",
    "case ghp_0123456789abcdefghijABCDEFGHIJ01": "contains whitespace or a control character",
    "ghp_0123456789abcdefghijABCDEFGHIJ01": "looks like a GitHub token",
    "ghp_" + "a1B2" * 9: "looks like a GitHub token",
    "s-github_pat_11ABCDEFG0123456789_abcdefghij": "looks like a GitHub token",
    "sk-proj-abcdefghijklmnopqrstuvwx": "looks like an OpenAI API key",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl": "looks like a JSON Web Token",
    "call-+44-20-7946-0958": "contains a phone number",
    "case-5551234567": "contains a phone number",
    "555_123_4567": "contains a phone number",
    "cust15551234567": "contains a phone number",
    "cust4155550123": "contains a phone number",
    "0044_20_7946_0958": "contains a phone number",
    "cust-0123456789abcdef0123456789abcdef": "contains a long hex string (a secret or hash?)",
    "tok-QWxhZGRpbjpvcGVuIHNlc2FtZQ9xYz0Rk2d": "contains a long base64 string (a secret?)",
    "tab\there": "contains whitespace or a control character",
    "bell\x07": "contains whitespace or a control character",
    "x" * (MAX_LENGTH + 1): f"is longer than {MAX_LENGTH} characters",
    "": "is empty",
    "slash/and/dots..": "has characters other than letters, digits, '.', '_' and '-'",
}


@pytest.mark.parametrize("session_id", ACCEPTED)
def test_accepted(session_id):
    check_session_id(session_id)


@pytest.mark.parametrize("session_id, rule", list(REFUSED.items()))
def test_refused_with_the_rule_named_and_the_id_not_echoed(session_id, rule):
    with pytest.raises(IdRejected) as refused:
        check_session_id(session_id)
    assert refused.value.rule == rule
    if len(session_id) > 3:
        assert session_id not in str(refused.value)
        assert session_id not in shown(session_id)


def test_a_minted_id_is_bound_to_its_owner():
    key = b"k" * 32
    alice, bob = Minter(key, "alice"), Minter(key, "bob")
    mine = alice.new()
    assert MINTED.fullmatch(mine) and alice.minted_for_me(mine) and not bob.minted_for_me(mine)
    assert alice.new() != mine  # random


def test_an_id_minted_from_a_business_key_is_stable_opaque_and_per_owner():
    key = b"k" * 32
    alice, bob = Minter(key, "alice"), Minter(key, "bob")
    case = "cust-4155550123"
    assert alice.for_key(case) == alice.for_key(case) != bob.for_key(case)
    assert not any(ch.isdigit() for ch in alice.for_key(case))
    assert Minter(b"other key" * 4, "alice").for_key(case) != alice.for_key(case)


def test_a_forged_tag_or_a_changed_letter_is_not_minted_for_anyone():
    alice = Minter(b"k" * 32, "alice")
    mine = alice.new()
    flipped = mine[:-1] + ("g" if mine[-1] != "g" else "h")
    assert not alice.minted_for_me(flipped)
    assert not alice.minted_for_me(mine.upper()) and not alice.minted_for_me(mine + "g")


def test_the_refusal_of_a_foreign_id_and_of_an_unused_one_is_the_same():
    alice, bob = Minter(b"k" * 32, "alice"), Minter(b"k" * 32, "bob")
    assert str(not_minted(alice.new())) == str(not_minted("handoff-0123456789abcdef"))
    assert str(not_minted("cust-4155550123")).endswith("; it also contains a phone number")
    assert bob.new() not in str(not_minted(bob.new()))


def test_different_cases_get_different_ids():
    alice = Minter(b"k" * 32, "alice")
    assert alice.for_key("acme-case-1001") != alice.for_key("acme-case-1002")


def test_a_safe_id_is_shown_as_it_is():
    assert shown("analyst-demo") == "analyst-demo"
    assert shown("cust-4155550123") == "(not shown: it contains a phone number)"


def test_a_refusal_without_a_shape_says_nothing_more():
    assert str(not_minted("analyst-demo")) == (
        "session id refused: it was not minted for you by the app (the guarded path accepts only hs- and 40 letters g-v)")
