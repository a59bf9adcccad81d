"""Every id rule, with ids it accepts and ids it refuses; a refusal never quotes the id."""

import pytest

from handoff.guard.ids import IdRejected, check_session_id

ACCEPTED = [
    "analyst-demo",
    "sdklabs-75e6b8f216d0451b",
    "acme-case-1001-7f3a",
    "tenant.42_case-9",
    "handoff-0123456789abcdef",
]

REFUSED = {
    "alice@example.com-chat": "contains an e-mail address",
    "case ghp_0123456789abcdefghijABCDEFGHIJ01": "contains whitespace or a control character",
    "ghp_0123456789abcdefghijABCDEFGHIJ01": "looks like a GitHub token",
    "s-github_pat_11ABCDEFG0123456789_abcdefghij": "looks like a GitHub token",
    "sk-proj-abcdefghijklmnopqrstuvwx": "looks like an OpenAI API key",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl": "looks like a JSON Web Token",
    "call-+44-20-7946-0958": "contains a phone number",
    "case-5551234567": "contains a phone number",
    "cust-0123456789abcdef0123456789abcdef": "contains a long hex string (a secret or hash?)",
    "tok-QWxhZGRpbjpvcGVuIHNlc2FtZQ9xYz0Rk2d": "contains a long base64 string (a secret?)",
    "tab\there": "contains whitespace or a control character",
    "bell\x07": "contains whitespace or a control character",
    "x" * 65: "is longer than 64 characters",
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
