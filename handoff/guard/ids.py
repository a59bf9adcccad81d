"""Session ids on the guarded path: minted by the app, bound to their owner.

A session id is an identifier an app maps back to its own records, never a place for
secrets or personal data (ids end up in paths, logs and URLs). No list of bad patterns
can be complete, so the guarded path is an **allowlist**: it accepts only ids the app
minted for the caller (:class:`Minter`):

* ``hs-`` and 40 letters from ``g``-``v``: 96 bits that are random (:meth:`Minter.new`)
  or derived by HMAC from the app's business key (:meth:`Minter.for_key`, so the same
  case always maps to the same id without the id revealing it), then a 64-bit HMAC tag
  binding the id to its owner. Letters only, so an id cannot contain a digit run — no
  phone number, no account number — whatever the randomness draws.
* The tag is checked on every guarded call: an id minted for alice is not an id of bob's,
  so bob's create, resume or metadata of it gets the same refusal as a never-minted id —
  the answer never depends on whether alice's session exists.

The pattern rules below (:func:`check_session_id`) no longer decide anything on the
guarded path; they explain a refusal ("it also contains a phone number") and warn the
raw lab. A refusal names the rule and never repeats the id.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

MAX_LENGTH = 64
PREFIX = "hs-"
_LETTERS = "ghijklmnopqrstuv"  # a hex digit as a letter that is not itself a hex digit
_RANDOM_BYTES, _TAG_BYTES = 12, 8
MINTED = re.compile(rf"{PREFIX}[{_LETTERS}]{{{2 * (_RANDOM_BYTES + _TAG_BYTES)}}}")
MINTED_SHAPE = f"{PREFIX} and {2 * (_RANDOM_BYTES + _TAG_BYTES)} letters g-v"

# A random hex token (ours: handoff-…, sdklabs-…) is not a phone number for the rule
# below, even when its digits happen to run for a while.
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{12,}(?![0-9A-Za-z])")
# (rule, pattern): the first rule that matches is the one reported.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("contains whitespace or a control character", re.compile(r"[\s\x00-\x1f\x7f]")),
    ("contains an e-mail address", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")),
    ("looks like a GitHub token", re.compile(r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("looks like an OpenAI API key", re.compile(r"sk-(proj-)?[A-Za-z0-9_-]{20,}")),
    ("looks like a JSON Web Token", re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")),
    ("contains a long hex string (a secret or hash?)", re.compile(r"[0-9a-fA-F]{32,}")),
    # 9-15 digits, maybe with a leading + and separators (space, brackets, . _ -), on
    # their own; or 10-15 right after letters (cust4155550123, but not build-v123456789).
    ("contains a phone number", re.compile(r"(?<![0-9A-Za-z])\+?\d(?:[ ()._-]?\d){8,14}(?!\d)"
                                           r"|(?<=[A-Za-z])\d(?:[ ()._-]?\d){9,14}(?!\d)")),
    ("contains a long base64 string (a secret?)",
     re.compile(r"(?=[A-Za-z0-9+/_=-]{32,})(?=\S*[A-Z])(?=\S*[a-z])(?=\S*\d)[A-Za-z0-9+/_=-]{32,}")),
)
_ALLOWED = re.compile(r"[A-Za-z0-9._-]+")


class IdRejected(ValueError):
    """The id breaks a rule; ``rule`` says which, and nothing quotes the id."""

    def __init__(self, rule: str):
        super().__init__(f"session id refused: it {rule}")
        self.rule = rule


def secret_shape(session_id: str) -> str | None:
    """The first pattern rule ``session_id`` breaks (it may carry a secret or personal
    data, or is malformed), or None."""
    if not session_id:
        return "is empty"
    if len(session_id) > MAX_LENGTH:
        return f"is longer than {MAX_LENGTH} characters"
    for rule, pattern in _RULES:
        text = _HEX_TOKEN.sub("~", session_id) if rule == "contains a phone number" else session_id
        if pattern.search(text):
            return rule
    if not _ALLOWED.fullmatch(session_id):
        return "has characters other than letters, digits, '.', '_' and '-'"
    return None


def check_session_id(session_id: str) -> None:
    """Raise IdRejected if the id may carry a secret or personal data, or is malformed."""
    rule = secret_shape(session_id)
    if rule:
        raise IdRejected(rule)


def shown(session_id: str) -> str:
    """An id as it may be printed or stored: itself, unless it looks like a secret or
    personal data (the raw path accepts such an id, as the raw SDK does, but the tool
    never repeats it)."""
    shape = secret_shape(session_id)
    return f"(not shown: it {shape})" if shape else session_id


def _letters(data: bytes) -> str:
    return "".join(_LETTERS[int(digit, 16)] for digit in data.hex())


class Minter:
    """The app's id minting for one principal, with a key only the app holds."""

    def __init__(self, key: bytes, owner: str):
        self._key = key
        self.owner = owner

    def _tag(self, body: str) -> str:
        mac = hmac.new(self._key, f"owner\0{self.owner}\0{body}".encode(), hashlib.sha256).digest()
        return _letters(mac[:_TAG_BYTES])

    def _minted(self, random_part: bytes) -> str:
        body = _letters(random_part)
        return f"{PREFIX}{body}{self._tag(body)}"

    def new(self) -> str:
        """An id for a new session: 96 random bits and the owner's tag."""
        return self._minted(secrets.token_bytes(_RANDOM_BYTES))

    def for_key(self, business_key: str) -> str:
        """The id of the app's case ``business_key`` (same key, same id; the id says
        nothing about the key), bound to this owner."""
        derived = hmac.new(self._key, f"case\0{business_key}".encode(), hashlib.sha256).digest()
        return self._minted(derived[:_RANDOM_BYTES])

    def minted_for_me(self, session_id: str) -> bool:
        if not MINTED.fullmatch(session_id):
            return False
        body, tag = session_id[len(PREFIX):-2 * _TAG_BYTES], session_id[-2 * _TAG_BYTES:]
        return hmac.compare_digest(tag, self._tag(body))


def not_minted(session_id: str) -> IdRejected:
    """The refusal for an id the app did not mint for the caller: the same words for any
    such id, plus, when the id itself has one, the shape that makes it unsafe."""
    rule = f"was not minted for you by the app (the guarded path accepts only {MINTED_SHAPE})"
    shape = secret_shape(session_id)
    return IdRejected(rule + (f"; it also {shape}" if shape else ""))
