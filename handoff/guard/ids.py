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
* Every HMAC is keyed with the owner's own key, itself an HMAC of the app's key and the
  owner's name: alice's and bob's ids for the same business key are unrelated strings,
  so nobody the app mints for can test a guessed key against an id someone else leaked.
* The tag is checked on every guarded call: an id minted for alice is not an id of bob's,
  so bob's create, resume or metadata of it gets the same refusal as a never-minted id —
  the answer never depends on whether alice's session exists.

The pattern rules below (:func:`secret_shape`) no longer decide anything on the guarded
path; they explain a refusal ("it also contains a phone number"), warn the raw lab, and
say what a report shows redacted (:func:`redacted`). Besides the project's own rules they
ask Yelp's detect-secrets (its regex plugins: cloud and SaaS API keys, tokens, private
keys, JWTs, public IPs; and its base64 entropy measure). A refusal names the rule and
never repeats the id.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
from typing import Callable, Iterator

MAX_LENGTH = 64
MAX_LOOKED_THROUGH = 1_000  # characters: no id or business key is longer
TOO_LONG = f"too long to look through (more than {MAX_LOOKED_THROUGH:,} characters)"
PREFIX = "hs-"
_LETTERS = "ghijklmnopqrstuv"  # a hex digit as a letter that is not itself a hex digit
_RANDOM_BYTES, _TAG_BYTES = 12, 8
MINTED = re.compile(rf"{PREFIX}[{_LETTERS}]{{{2 * (_RANDOM_BYTES + _TAG_BYTES)}}}")
MINTED_SHAPE = f"{PREFIX} and {2 * (_RANDOM_BYTES + _TAG_BYTES)} letters g-v"

# Where digits are not a phone number, whatever libphonenumber would make of them: a
# random hex token (ours: handoff-…, sdklabs-…) and a UUID (what the SDK mints; its
# groups are hex, and 1 in 15 held a run of digits a phone rule took for a number).
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{12,}(?![0-9A-Za-z])")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A bare run of digits that reads as a time of 2001-2033: epoch seconds or milliseconds
# (the SDK's guide builds ids as {userId}-{taskId}-{timestamp}), or a date with its time
# (20261206, 202612061015, 20261206101500). No one writes a phone number that way.
# Ten digits from 1 000 000 000 (2001-09-09) to 2 000 000 000 (2033-05-18): a run starting
# with 1, which no national number of PHONE_REGIONS does at that length (they start with
# 0, or with 2-9: a 201 or 98x number is a number, not 2033's or 2001's seconds).
_EPOCH_SECONDS = (1_000_000_000, 2_000_000_000)
_DATE_TIME = re.compile(r"(?:20[0-3]\d)(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:(?:[01]\d|2[0-3])[0-5]\d(?:[0-5]\d)?)?")
_ISO_DATE_TIME = re.compile(r"20[0-3]\d[-.](?:0[1-9]|1[0-2])[-.](?:0[1-9]|[12]\d|3[01])"
                            r"(?:T(?:[01]\d|2[0-3])[-:.]?[0-5]\d(?:[-:.]?[0-5]\d)?)?")
_BARE_DIGITS = re.compile(r"(?<![\d+])\d+(?!\d)")
PHONE = "contains a phone number"
LONG_NUMBER = "contains a long number (a card or account number?)"
# A number written without its country code is read as each of these countries would
# dial it (libphonenumber's region codes); one with it (+44 or 0044) is read as such.
PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "BR", "JP", "CN", "AU", "ES", "IT", "NL")
# Fewer digits are a local number without its area code, or a short code: in an id they
# are far likelier a counter (order-050990) than something that can be dialled.
MIN_PHONE_DIGITS = 9
# The rules about what an id is made of, not what it carries.
_WHITESPACE = ("contains whitespace or a control character", re.compile(r"[\s\x00-\x1f\x7f]"))
_ALLOWED = re.compile(r"[A-Za-z0-9._-]+")
# (rule, pattern): what an id may carry. The first rule that matches is the one reported:
# these first, then detect-secrets' detectors (each names a provider's key or token),
# then the broad ones below, then detect-secrets' entropy measure.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("contains an e-mail address", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")),
    ("looks like a GitHub token", re.compile(r"(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("looks like an OpenAI API key", re.compile(r"sk-(proj-)?[A-Za-z0-9_-]{20,}")),
    ("looks like a JSON Web Token", re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")),
)
_BROAD_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("contains a long hex string (a secret or hash?)", re.compile(r"[0-9a-fA-F]{32,}")),
    # 16 digits or more (a payment card has 16-19; an IBAN's account part, an account
    # number), maybe in groups: longer than any phone number, which the rule below leaves alone.
    (LONG_NUMBER, re.compile(r"\d(?:[ ._-]?\d){15,}")),
    ("contains a long base64 string (a secret?)",
     re.compile(r"(?=[A-Za-z0-9+/_=-]{32,})(?=\S*[A-Z])(?=\S*[a-z])(?=\S*\d)[A-Za-z0-9+/_=-]{32,}")),
)
# A run of base64 (with its url-safe letters) long enough for a random token to stand out
# by its entropy; detect-secrets' own limit decides (4.5 bits per character: more
# different characters than a word, a UUID or a minted id can have).
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
Finder = Callable[[str], Iterator[str]]


class IdRejected(ValueError):
    """The id breaks a rule; ``rule`` says which, and nothing quotes the id."""

    def __init__(self, rule: str):
        super().__init__(f"session id refused: it {rule}")
        self.rule = rule


@functools.cache
def _detect_secrets() -> tuple[tuple[tuple[str, Finder], ...], Finder]:
    """detect-secrets' detectors, loaded once (its import takes a few tenths of a second):
    (what each finds, a function yielding its findings in a string), and its entropy
    measure as such a function. Only the detectors that read the text itself: not its
    keyword plugin (made for assignments in source code), and never a ``verify``, which
    would send what it found to the provider."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    detectors = tuple((secret_type, plugin().analyze_string)
                      for secret_type, plugin in sorted(get_mapping_from_secret_type_to_class().items())
                      if issubclass(plugin, RegexBasedDetector))
    entropy = Base64HighEntropyString()

    def random_looking(text: str) -> Iterator[str]:
        return (run for run in _BASE64_RUN.findall(text)
                if entropy.calculate_shannon_entropy(run) > entropy.entropy_limit)

    return detectors, random_looking


def _blank(token: re.Match[str]) -> str:
    return "~" * len(token.group())  # the same length: where a finding starts stays where it is


def _found(rules: tuple[tuple[str, re.Pattern[str]], ...], text: str) -> Iterator[tuple[str, int]]:
    for rule, pattern in rules:
        found = pattern.search(_without_tokens(text) if rule == LONG_NUMBER else text)
        if found:
            yield rule, found.start()


def _without_tokens(text: str) -> str:
    """``text`` with its UUIDs and hex tokens blanked: their digits are no number's."""
    return _HEX_TOKEN.sub(_blank, _UUID.sub(_blank, text))


def _not_a_time(digits: re.Match[str]) -> str:
    run = digits.group()
    seconds = int(run[:10]) if len(run) in (10, 13) else 0
    if _EPOCH_SECONDS[0] <= seconds < _EPOCH_SECONDS[1] or _DATE_TIME.fullmatch(run):
        return _blank(digits)
    return run


def _alone(looked_at: str) -> Iterator[int]:
    """Where a run of digits (after a ``+``, or not) is a valid number on its own, in one
    of PHONE_REGIONS or as an international one: what the matcher misses when another
    group of digits touches it (``order-12-4155550123`` reads to it as one number)."""
    import phonenumbers

    for run in re.finditer(r"\+?\d{%d,}" % MIN_PHONE_DIGITS, looked_at):
        digits = run.group().lstrip("+")
        for region in PHONE_REGIONS:
            try:
                number = phonenumbers.parse(run.group(), region)
            except phonenumbers.NumberParseException:
                continue
            if not phonenumbers.is_valid_number(number):
                continue
            # Written as people dial it: the national form with its trunk prefix (0...),
            # or the international one (with +, 00 or nothing before the country code);
            # not a national number missing its 0 (123456789 is no French number as written).
            national = re.sub(r"\D", "", phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL))
            international = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")
            if digits in (national, international, "00" + international):
                yield run.start()
                break


def phone_number_at(text: str) -> int | None:
    """Where the first phone number in ``text`` starts, as libphonenumber finds numbers
    in text (a valid number of one of PHONE_REGIONS, its digits grouped as that country
    writes them, or not grouped at all; at least MIN_PHONE_DIGITS digits), or None.
    Before it looks: hex tokens, UUIDs and times are blanked; a letter touching a digit
    becomes a space (``cust4155550123`` holds a number the matcher would not see inside a
    word); an underscore becomes a dash (a separator the matcher knows)."""
    import phonenumbers

    looked_at = _BARE_DIGITS.sub(_not_a_time, _ISO_DATE_TIME.sub(_blank, _without_tokens(text)))
    if sum(character.isdigit() for character in looked_at) < MIN_PHONE_DIGITS:
        return None
    looked_at = re.sub(r"[A-Za-z](?=\d)|(?<=\d)[A-Za-z]", " ", looked_at).replace("_", "-")
    starts = [match.start for region in PHONE_REGIONS
              for match in phonenumbers.PhoneNumberMatcher(looked_at, region, leniency=phonenumbers.Leniency.EXACT_GROUPING)
              if sum(character.isdigit() for character in match.raw_string) >= MIN_PHONE_DIGITS]
    return min([*starts, *_alone(looked_at)], default=None)


def _findings(text: str) -> Iterator[tuple[str, int]]:
    """Each rule about content that ``text`` breaks, in the order they are reported, with
    where its finding starts. A UUID and nothing else carries nothing: its form leaves
    no room (what the SDK mints when no id is given, so the commonest id of all). Text
    longer than any id is not looked through (some rules take time that grows faster
    than its length: half a second at 8,000 characters) and shown as such."""
    if len(text) > MAX_LOOKED_THROUGH:
        yield TOO_LONG, 0
        return
    if _UUID.fullmatch(text):
        return
    yield from _found(_RULES, text)
    detectors, random_looking = _detect_secrets()
    for secret_type, finds in detectors:
        for finding in finds(text):
            yield f"looks like a secret (detect-secrets: {secret_type})", max(text.find(finding), 0)
            break
    yield from _found(_BROAD_RULES[:2], text)
    phone = phone_number_at(text)
    if phone is not None:
        yield PHONE, phone
    yield from _found(_BROAD_RULES[2:], text)
    for run in random_looking(text):
        yield "contains a high-entropy string (a secret? detect-secrets measures it)", text.find(run)
        break


def _carried(text: str) -> str | None:
    return next((rule for rule, _ in _findings(text)), None)


def secret_shape(session_id: str) -> str | None:
    """The first pattern rule ``session_id`` breaks (it may carry a secret or personal
    data, or is malformed), or None."""
    if not session_id:
        return "is empty"
    if len(session_id) > MAX_LENGTH:
        return f"is longer than {MAX_LENGTH} characters"
    if _WHITESPACE[1].search(session_id):
        return _WHITESPACE[0]
    carried = _carried(session_id)
    if carried:
        return carried
    if not _ALLOWED.fullmatch(session_id):
        return "has characters other than letters, digits, '.', '_' and '-'"
    return None


def secret_in(text: str) -> str | None:
    """The rule by which ``text`` (an id, a business key) carries a secret or personal
    data, or None: :func:`secret_shape` without the rules about the id's form (its
    length, its characters), which say nothing about what it carries."""
    return _carried(text)


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


REDACTED = "(redacted"  # then ": " and what hid it, ")"
_KEPT = 4  # at most this many characters from before the first finding are shown


def rule_label(rule: str) -> str:
    """What a rule finds, in a few words: "contains a phone number" -> "phone number",
    "looks like a secret (detect-secrets: AWS Access Key)" -> "AWS Access Key"."""
    provider = re.fullmatch(r"looks like a secret \(detect-secrets: (.+)\)", rule)
    if provider:
        return provider.group(1)
    return re.sub(r"^(contains|looks like) (an?|the) ", "", rule).split(" (")[0]


def redacted(text: str) -> str:
    """``text`` (an id, a business key) as a report shows it: itself, or, when it carries
    a secret or personal data, at most four letters (or ``.``, ``_``, ``-``) from before
    the first finding of any rule, never a character of one, then ``…(redacted: WHAT)``,
    WHAT the :func:`rule_label` of the rule a refusal names (:func:`secret_in`):
    ``cust…(redacted: phone number)``, short enough for a diagram's label, and saying
    why it is hidden."""
    found = list(_findings(text))
    if not found:
        return text
    start = min(where for _, where in found)  # nothing of any finding is shown
    kept = re.match(r"[A-Za-z._-]*", text[:min(start, _KEPT)]).group()
    return f"{kept}…{REDACTED}: {rule_label(found[0][0])})"  # the rule a refusal would name


def _letters(data: bytes) -> str:
    return "".join(_LETTERS[int(digit, 16)] for digit in data.hex())


def _mac(key: bytes, *fields: str) -> bytes:
    return hmac.new(key, "\0".join(fields).encode(), hashlib.sha256).digest()


class Minter:
    """The app's id minting for one principal: every id is an HMAC under the owner's own
    key, derived from a key only the app holds (which the minter does not keep)."""

    def __init__(self, key: bytes, owner: str):
        self.owner = owner
        self._key = _mac(key, "handoff-minter-v2", "owner", owner)

    def _tag(self, body: str) -> str:
        return _letters(_mac(self._key, "tag", body)[:_TAG_BYTES])

    def _minted(self, random_part: bytes) -> str:
        body = _letters(random_part)
        return f"{PREFIX}{body}{self._tag(body)}"

    def new(self) -> str:
        """An id for a new session: 96 random bits and the owner's tag."""
        return self._minted(secrets.token_bytes(_RANDOM_BYTES))

    def for_key(self, business_key: str) -> str:
        """The id of the app's case ``business_key`` for this owner: the same key, the same
        id; another owner's id for it shares nothing with this one, and neither says
        anything about the key."""
        return self._minted(_mac(self._key, "case", business_key)[:_RANDOM_BYTES])

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
