"""Properties that must hold for any input, checked with Hypothesis: the scenario loader
raises nothing but its own error, the id policy admits nothing secret-shaped (and names,
and a report redacts, every id that carries a secret), the event-log reader never fails,
and a receipt notices every byte that changed."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings, strategies as st

from handoff.errors import UserError
from handoff.eventlog import parse_events, summarize
from handoff.guard.ids import MINTED, PHONE_REGIONS, Minter, redacted, rule_label, secret_in, secret_shape
from handoff.guard.receipt import Receipt, changes_since
from handoff.scenario_files import load

FIELDS = ["title", "proves", "does_not_prove", "order", "session_id", "store", "hosts", "steps", "name", "actions",
          "home", "session", "host", "principal", "guarded", "reuse", "after", "wait", "faults", "kind", "at", "turn", "heal",
          "target", "cut", "forked", "expect", "closed_before_resume", "provider", "expect_tell", "tags", "restart",
          "runtime", "sdk", "loaded_all_events", "turn_timeout", "known_good", "x"]
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
    | st.sampled_from(["create", "tell", "ask", "close", "resume", "hold", "kept", "namespace", "local", "../x", "kill",
                       "after-turn", "tear-log", "partition", "faults", "1.0.92", "1.0.102 -> 1.0.92",
                       "1.0.40 -> 1.0.92", "lease-expired"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=5),
    max_leaves=20,
)


def toml_value(value) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value).replace("inf", "inf").replace("nan", "nan")
    if isinstance(value, (int, str)):
        return json.dumps(value) if isinstance(value, str) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(top=st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=8))
def test_the_loader_raises_only_its_own_error(tmp_path, top):
    path = tmp_path / "generated.toml"
    path.write_text("\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in top.items()), encoding="utf-8")
    try:
        load(path)
    except UserError:
        pass


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_the_loader_survives_any_bytes(tmp_path, data):
    path = tmp_path / "generated.toml"
    path.write_bytes(data)
    try:
        load(path)
    except UserError:
        pass


HOSTILE_NAMES = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["..", ".", "/../../../tmp/victim", "a/b", "A\u0007", "A\u001b]0;x\u0007", "Schritt-ä", "-x",
                     "x" * 41, "con", "A\nB", " A", "A ", "a\\b", "%2e%2e"]),
    st.builds(lambda a, b: a + b, st.sampled_from(["../", "/", "\u202e", "\u0000"]), st.text(max_size=10)),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(step=HOSTILE_NAMES, file_name=HOSTILE_NAMES)
def test_a_name_loads_only_if_every_path_made_of_it_stays_in_its_run(tmp_path, step, file_name):
    """Any step name and scenario file name: refused at load (exit 2), or plain enough that
    the run's directories and files made of it stay inside the run's directory."""
    from handoff.confined import inside

    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    path = folder / f"{file_name}.toml"
    if path.parent != folder:  # a name with a separator would be a file elsewhere (/, ../): not a scenario name
        return
    try:
        path.write_text(f'title = "t"\nproves = "p"\ndoes_not_prove = "d"\n[[steps]]\nname = {json.dumps(step)}\n'
                        f'actions = ["create", "tell", "close"]\n', encoding="utf-8")
    except (OSError, ValueError):  # not a name this file system takes: nothing to load
        return
    try:
        loaded = load(path)
    except UserError:
        return
    run = tmp_path / "run"
    scenario_dir = inside(run, loaded.name)
    for made in (f"home-{loaded.steps[0].name}", f"worker-{loaded.steps[0].name}.stderr"):
        assert inside(scenario_dir, made).resolve().is_relative_to(run.resolve())
    assert loaded.steps[0].name.isascii() and loaded.steps[0].name.isprintable()


SECRET_SHAPES = [re.compile(r"\d{12,}"), re.compile(r"@"), re.compile(r"gh[pousr]_"), re.compile(r"sk-"),
                 re.compile(r"eyJ"), re.compile(r"\d"),  # no digit at all: no phone, card or account number
                 re.compile(r"(A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)"), re.compile(r"xox[abposr]-", re.I),
                 re.compile(r"[rs]k_live_"), re.compile(r"SG\."), re.compile(r"gl(pat|dt|ft|soat|rt|cbt|imt|ptt)-"),
                 re.compile(r"npm_"), re.compile(r"pypi-"), re.compile(r"PRIVATE KEY"), re.compile(r"[A-Z]")]


@given(key=st.binary(min_size=16, max_size=64), owner=st.text(min_size=1, max_size=30),
       business=st.none() | st.text(max_size=80))
def test_every_id_the_guarded_path_admits_is_opaque(key, owner, business):
    minter = Minter(key, owner)
    minted = minter.new() if business is None else minter.for_key(business)
    assert MINTED.fullmatch(minted) and minter.minted_for_me(minted)
    assert secret_shape(minted) is None and secret_in(minted) is None  # detect-secrets' detectors too
    assert not any(shape.search(minted) for shape in SECRET_SHAPES)
    assert not any(character.isdigit() for character in minted)
    assert redacted(minted) == minted  # a report shows it as it is


def _jwt(header: dict, claims: dict, signature: bytes) -> str:
    import base64

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    return ".".join([part(json.dumps(header).encode()), part(json.dumps(claims).encode()), part(signature)])


def _phone(region: str, kind: str, last: int, form: str, plus: bool) -> str:
    """A valid number of ``region``'s numbering plan (its example number with other last
    digits, while that stays valid), written as people write it, with dashes for spaces."""
    import phonenumbers

    example = phonenumbers.example_number_for_type(region, getattr(phonenumbers.PhoneNumberType, kind))
    national = str(example.national_number)
    changed = phonenumbers.PhoneNumber(country_code=example.country_code,
                                       national_number=int(national[:-4] + f"{last:04d}"))
    number = changed if phonenumbers.is_valid_number(changed) else example
    written = phonenumbers.format_number(number, getattr(phonenumbers.PhoneNumberFormat, form)).replace(" ", "-")
    return written if plus or form != "E164" else written.removeprefix("+")


# Secrets and personal data as they come: providers' keys and tokens (found by
# detect-secrets, some by the project's own rules too), e-mail addresses, phone numbers,
# card and account numbers, JWTs.
SECRETS = st.one_of(
    st.from_regex(r"(AKIA|ASIA)[0-9A-Z]{16}", fullmatch=True),
    st.from_regex(r"gh[pousr]_[A-Za-z0-9]{36}", fullmatch=True),
    st.from_regex(r"xox[abposr]-[0-9]{10,12}-[0-9]{10,13}-[a-z0-9]{10,24}", fullmatch=True),
    st.from_regex(r"[rs]k_live_[0-9a-zA-Z]{24}", fullmatch=True),
    st.from_regex(r"glpat-[A-Za-z0-9_]{20,30}", fullmatch=True),
    st.from_regex(r"sk-(proj-)?[A-Za-z0-9_]{20,30}", fullmatch=True),
    st.from_regex(r"[a-z0-9._]{1,12}@[a-z0-9]{1,12}\.(com|org|de|co\.uk)", fullmatch=True),
    st.builds(lambda *parts: _phone(*parts), st.sampled_from(PHONE_REGIONS), st.sampled_from(["MOBILE", "FIXED_LINE"]),
              st.integers(0, 9999), st.sampled_from(["E164", "INTERNATIONAL", "NATIONAL"]), st.booleans()),
    st.from_regex(r"[1-9][0-9]{15,18}", fullmatch=True),  # a card or account number
    st.builds(_jwt, st.fixed_dictionaries({"alg": st.sampled_from(["HS256", "RS256"])}),
              st.dictionaries(st.sampled_from(["sub", "name", "iat"]), st.text(max_size=8), min_size=1, max_size=3),
              st.binary(min_size=8, max_size=32)),
)
WORD = st.from_regex(r"[a-z]{0,8}", fullmatch=True)


@given(before=WORD, secret=SECRETS, after=WORD)
def test_an_id_carrying_a_secret_is_flagged_and_a_report_shows_none_of_it(before, secret, after):
    """The other side of "admits nothing secret-shaped": the rules name every such id,
    wherever in it the secret sits, and what a report shows of it keeps none of it."""
    session_id = "-".join(part for part in (before, secret, after) if part)
    assert secret_shape(session_id) is not None and secret_in(session_id) is not None
    shown = redacted(session_id)
    kept, marker, why = shown.partition("…(redacted: ")
    assert marker and why == f"{rule_label(secret_in(session_id))})" and secret not in shown
    assert not any(character.isdigit() for character in kept)


@given(text=st.text(max_size=80))
def test_an_admitted_id_is_a_minted_one(text):
    """Nothing a caller makes up passes for a minted id, whatever it looks like."""
    minter = Minter(b"k" * 32, "alice")
    assert not minter.minted_for_me(text) or MINTED.fullmatch(text)


@given(data=st.binary(max_size=2000))
def test_the_event_log_reader_never_fails(data):
    events, unreadable = parse_events(data)
    assert all(isinstance(event, dict) for event in events)
    assert unreadable >= 0


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=10)
EVENT_KEYS = st.sampled_from(["type", "data", "parentId", "id", "content", "copilotVersion", "eventCount",
                              "alreadyInUse"])
EVENT_TYPES = st.sampled_from(["session.start", "session.resume", "session.shutdown", "user.message",
                               "assistant.message"])


@given(events=st.lists(st.dictionaries(EVENT_KEYS, EVENT_TYPES | JSON | st.dictionaries(EVENT_KEYS, JSON, max_size=4),
                                       max_size=4), max_size=8))
def test_a_summary_of_any_events_has_the_types_it_promises(events):
    """The guard summarizes a log before it lets a resume in: whatever the events hold,
    that never fails, and what it reads has the runtime's types or is None."""
    summary = summarize(events)
    assert summary.created_by is None or isinstance(summary.created_by, str)
    assert summary.last_prompt is None or isinstance(summary.last_prompt, str)
    assert summary.last_reply is None or isinstance(summary.last_reply, str)
    for resume in summary.resumes:
        assert resume.event_count is None or type(resume.event_count) is int
        assert resume.already_in_use is None or isinstance(resume.already_in_use, bool)


CLOSED_LOG = b"".join(json.dumps({"id": str(n), "parentId": str(n - 1), "type": "t", "data": {"text": "x" * n}}).encode()
                      + b"\n" for n in range(8))


@given(position=st.integers(0, len(CLOSED_LOG) - 1), byte=st.integers(0, 255), mode=st.sampled_from(["set", "insert",
                                                                                                      "delete"]))
def test_any_byte_edit_of_a_closed_log_is_refused_or_changes_nothing(position, byte, mode):
    receipt = Receipt.of(CLOSED_LOG)
    edited = bytearray(CLOSED_LOG)
    if mode == "set":
        edited[position] = byte
    elif mode == "insert":
        edited.insert(position, byte)
    else:
        del edited[position]
    change = changes_since(receipt, bytes(edited))
    assert (change is None) == (bytes(edited) == CLOSED_LOG)
