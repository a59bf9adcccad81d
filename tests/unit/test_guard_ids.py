"""Id rules and minted ids: the pattern rules (the project's own and detect-secrets')
name what an id carries without quoting it, and a report shows such an id redacted; only
ids minted for the caller pass the guarded path, and two owners' ids for the same case
have nothing in common."""

import pytest

from handoff.guard.ids import (
    MAX_LENGTH,
    MINTED,
    PREFIX,
    IdRejected,
    Minter,
    check_session_id,
    not_minted,
    redacted,
    rule_label,
    secret_in,
    shown,
)

ACCEPTED = [
    "analyst-demo",
    "sdklabs-75e6b8f216d0451b",
    "acme-case-1001-7f3a",
    "tenant.42_case-9",
    "handoff-0123456789abcdef",
    "build-v123456789",  # 9 digits after a letter that is part of a word with digits: a build number
    "quarterly-review-of-the-north-west-store",  # a readable lowercase id of 40 characters is not base64
    "x" * MAX_LENGTH,
    "6bb1ea7c-7199-487d-b828-0d5bbc299b85",  # a UUID: what the runtime chooses (create-without-id)
    "customer-journey-6bb1ea7c-7199-487d-b828-0d5bbc299b85",  # words and a UUID are not random enough
    "release-2024.10.1",
    "hs-" + "ghijklmnopqrstuv" * 2 + "ghijklmn",  # a minted id's shape: 16 letters cannot reach the entropy limit
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
    # Found by detect-secrets, not by the project's own rules: providers' keys and tokens,
    # a public IP address, and a token random enough by its entropy.
    "case-AKIAIOSFODNN7EXAMPLE": "looks like a secret (detect-secrets: AWS Access Key)",
    "xoxb-123456789012-1234567890123-abcdefghij": "looks like a secret (detect-secrets: Slack Token)",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc": "looks like a secret (detect-secrets: Stripe Access Key)",
    "rk_live_0123456789abcdefghijABCD": "looks like a secret (detect-secrets: Stripe Access Key)",
    "glpat-abcdefghij0123456789": "looks like a secret (detect-secrets: GitLab Token)",
    "SK0123456789abcdef0123456789abcdef": "looks like a secret (detect-secrets: Twilio API Key)",
    "0123456789abcdef0123456789abcdef-us12": "looks like a secret (detect-secrets: Mailchimp Access Key)",
    "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0": "looks like a secret (detect-secrets: Discord Bot Token)",
    "host-8.8.8.8": "looks like a secret (detect-secrets: Public IP (ipv4))",
    "tok-q7w8e9r0t1y2u3i4o5p6a7s8d9f0g1h2": "contains a high-entropy string (a secret? detect-secrets measures it)",
    "k3j5h6g7f8d9s0a1q2w3e4r5t6y7u8i9": "contains a high-entropy string (a secret? detect-secrets measures it)",
    # Longer than a phone number: a card number (16-19 digits), an IBAN's account digits.
    "card-4111111111111111": "contains a long number (a card or account number?)",
    "card-4111-1111-1111-1111": "contains a long number (a card or account number?)",
    "DE89370400440532013000": "contains a long number (a card or account number?)",
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


def test_two_owners_ids_for_the_same_case_share_nothing():
    """The id is a keyed function of (app key, owner, case): bob, given his own id for a
    case, learns nothing about alice's ids — not their body, not their tag — so he cannot
    confirm a guessed case behind an id of hers that leaked."""
    key = b"k" * 32
    alice, bob = Minter(key, "alice"), Minter(key, "bob")
    for case in ("cust-4155550123", "acme-case-1001", ""):
        hers, his = alice.for_key(case), bob.for_key(case)
        body = slice(len(PREFIX), -16)
        assert hers[body] != his[body] and hers[-16:] != his[-16:]
        same_places = sum(a == b for a, b in zip(hers[len(PREFIX):], his[len(PREFIX):]))
        assert same_places < 10  # by chance, 1 in 16 of the 40 letters; the old scheme shared 24
        assert alice.minted_for_me(hers) and not bob.minted_for_me(hers) and not alice.minted_for_me(his)


def test_the_ids_of_a_case_do_not_depend_on_anything_but_the_key_owner_and_case():
    key = b"k" * 32
    assert Minter(key, "alice").for_key("c") == Minter(bytes(key), "alice").for_key("c")
    assert Minter(key, "alice").for_key("c") != Minter(key, "alice ").for_key("c")
    assert Minter(key, "a").for_key("b\0c") != Minter(key, "a\0b").for_key("c")


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


REDACTED_AS = {
    "cust-4155550123": "cust…(redacted: phone number)",  # the letters before the phone number; no digit of it
    "cust4155550123": "cust…(redacted: phone number)",
    "alice@example.com-chat": "…(redacted: e-mail address)",  # the finding starts at once: nothing of it is kept
    "ghp_0123456789abcdefghijABCDEFGHIJ01": "…(redacted: GitHub token)",
    "case-AKIAIOSFODNN7EXAMPLE": "case…(redacted: AWS Access Key)",
    "xoxb-123456789012-1234567890123-abcdefghij": "…(redacted: Slack Token)",  # kept: before *any* rule's finding
    "tenant-x-0123456789abcdef0123456789abcdef": "tena…(redacted: long hex string)",
}


@pytest.mark.parametrize("session_id, shown_as", list(REDACTED_AS.items()))
def test_a_report_shows_a_secret_carrying_id_redacted(session_id, shown_as):
    assert secret_in(session_id) and redacted(session_id) == shown_as


@pytest.mark.parametrize("session_id", [*ACCEPTED, "x" * (MAX_LENGTH + 1), "tab\there", "slash/and/dots.."])
def test_an_id_that_carries_nothing_is_shown_as_it_is(session_id):
    """The rules about an id's form (length, characters) do not make a report hide it."""
    assert secret_in(session_id) is None and redacted(session_id) == session_id


@pytest.mark.parametrize("session_id", [sid for sid, rule in REFUSED.items()
                                        if secret_in(sid) and not rule.startswith("is ")])
def test_every_refused_id_that_carries_something_is_redacted_without_a_digit_of_it(session_id):
    shown_as = redacted(session_id)
    kept, marker, why = shown_as.partition("…(redacted: ")
    assert marker and len(kept) <= 4 and why.endswith(")") and len(why) > 1
    assert not any(character.isdigit() for character in kept)  # the label may hold digits ("ipv4"), never the id
    assert why[:-1] == rule_label(secret_in(session_id))
    assert secret_in(shown_as) is None  # what the report shows is not flagged in turn


@pytest.mark.parametrize("rule, label", [
    ("contains a phone number", "phone number"),
    ("contains an e-mail address", "e-mail address"),
    ("looks like an OpenAI API key", "OpenAI API key"),
    ("contains a long number (a card or account number?)", "long number"),
    ("looks like a secret (detect-secrets: AWS Access Key)", "AWS Access Key"),
])
def test_a_hidden_id_says_in_a_few_words_which_rule_hid_it(rule, label):
    assert rule_label(rule) == label


# Numbers as their own country writes them, that no other region of PHONE_REGIONS reads as
# a valid number (libphonenumber's example numbers): each region is needed to find its own.
OWN_REGION_NUMBERS = {"US": "5002345678", "DE": "08001234567890", "BR": "11961234567", "ES": "810123456",
                      "IT": "899123456"}


@pytest.mark.parametrize(("region", "digits"), list(OWN_REGION_NUMBERS.items()))
def test_a_number_written_as_its_own_country_writes_it_is_found(region, digits, monkeypatch):
    from handoff.guard import ids

    assert ids.phone_number_at(f"ref-{digits}") == 4
    monkeypatch.setattr(ids, "PHONE_REGIONS", tuple(r for r in ids.PHONE_REGIONS if r != region))
    assert ids.phone_number_at(f"ref-{digits}") is None  # what reads it is that region, no other
