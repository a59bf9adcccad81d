"""Id hygiene: a session id is an identifier an app maps back to its own records, never a
place for secrets or personal data (ids end up in paths, logs and URLs).

:func:`check_session_id` names the rule an id breaks without echoing the id, so the
refusal itself does not leak the secret it caught.
"""

from __future__ import annotations

import re

MAX_LENGTH = 64

# (rule, pattern): the first rule that matches is the one reported.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("contains whitespace or a control character", re.compile(r"[\s\x00-\x1f\x7f]")),
    ("contains an e-mail address", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")),
    ("looks like a GitHub token", re.compile(r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("looks like an OpenAI API key", re.compile(r"sk-(proj-)?[A-Za-z0-9_-]{20,}")),
    ("looks like a JSON Web Token", re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")),
    ("contains a long hex string (a secret or hash?)", re.compile(r"[0-9a-fA-F]{32,}")),
    # 9-15 digits, maybe with a leading + and separators, standing on their own: a run of
    # digits inside a hex string (our own random ids) is not a phone number.
    ("contains a phone number", re.compile(r"(?<![0-9A-Za-z])\+?\d(?:[ ().-]?\d){8,14}(?![0-9A-Za-z])")),
    ("contains a long base64 string (a secret?)", re.compile(r"(?=[A-Za-z0-9+/_=-]{32,})(?=\S*[A-Z])(?=\S*[a-z])(?=\S*\d)[A-Za-z0-9+/_=-]{32,}")),
)
_ALLOWED = re.compile(r"[A-Za-z0-9._-]+")


class IdRejected(ValueError):
    """The id breaks a rule; ``rule`` says which, and nothing quotes the id."""

    def __init__(self, rule: str):
        super().__init__(f"session id refused: it {rule}")
        self.rule = rule


def check_session_id(session_id: str) -> None:
    """Raise IdRejected if the id may carry a secret or personal data, or is malformed."""
    if not session_id:
        raise IdRejected("is empty")
    if len(session_id) > MAX_LENGTH:
        raise IdRejected(f"is longer than {MAX_LENGTH} characters")
    for rule, pattern in _RULES:
        if pattern.search(session_id):
            raise IdRejected(rule)
    if not _ALLOWED.fullmatch(session_id):
        raise IdRejected("has characters other than letters, digits, '.', '_' and '-'")
