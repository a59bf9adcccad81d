"""What a report shows of a session id that carries a secret or personal data: the id
redacted wherever it appears, by the guard's own rules (handoff/guard/ids.py).

The raw path accepts any id, as the raw SDK does (the `secret-in-id` scenario gives it a
customer's phone number), and the stored record keeps it as it was observed: the checker
judges from the raw events, and a verdict must not change because a report is made. A
report is for showing, so every format (the terminal, Markdown, JSON, the HTML page and
its diagrams) is made from a copy of the record and its judgement in which each such id
— in a field, in a worker's raw line, in an error message quoting it — reads
``cust…(redacted: phone number)``: the rule that hid it, in a few words.

Which ids: every value the record and its judgement hold as a session id (the
scenario's, each step's, each event's, the ids a listing or the registry returned) that
:func:`handoff.guard.ids.secret_in` flags. Free text is not searched for secret-shaped
substrings of its own: the fuzzy rules (phone numbers, long numbers, entropy) would take
timestamps, pids and digests for secrets.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from typing import Any, Callable

import msgspec

from handoff.checker.verdicts import RunJudgement
from handoff.guard.ids import redacted, secret_in
from handoff.runs.record import RunRecord

ID_FIELDS = frozenset({"session_id", "session", "listed", "registered"})


def for_display(record: RunRecord, judgement: RunJudgement) -> tuple[RunRecord, RunJudgement]:
    """The record and judgement as a report may show them: the same objects when no id
    in them carries a secret, else copies with every such id redacted."""
    flagged = {found for found in _ids(record, judgement) if secret_in(found)}
    if not flagged:
        return record, judgement
    replace = _replacer(flagged)
    return _scrubbed(record, replace), _scrubbed(judgement, replace)


def _ids(record: RunRecord, judgement: RunJudgement) -> set[str]:
    found: set[str] = set()
    _collect(record, found)
    _collect(judgement, found)
    for scenario in record.scenarios:
        for step in scenario.steps:
            _collect(step.view().events, found)  # the worker's raw lines, as the step's history has them
    return found


def _collect(value: Any, found: set[str], is_id: bool = False) -> None:
    if isinstance(value, str):
        if is_id and value:
            found.add(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, found, is_id)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, found)
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            _collect(getattr(value, name), found, name in ID_FIELDS)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            _collect(getattr(value, field.name), found, field.name in ID_FIELDS)


def _replacer(flagged: set[str]) -> Callable[[str], str]:
    """Replace each flagged id (and its JSON-escaped forms, in a worker's raw lines) by
    its redacted form; the longest first, so an id inside another goes with it."""
    shown: dict[str, str] = {}
    for found in flagged:
        for form in (found, json.dumps(found)[1:-1], json.dumps(found, ensure_ascii=False)[1:-1]):
            shown.setdefault(form, redacted(found))
    pattern = re.compile("|".join(re.escape(form) for form in sorted(shown, key=len, reverse=True)))

    def replace(text: str) -> str:
        return pattern.sub(lambda hit: shown[hit.group()], text) if pattern.search(text) else text

    return replace


def _scrubbed(value: Any, replace: Callable[[str], str]) -> Any:
    """``value`` with ``replace`` applied to every string in it (the same object where
    nothing changed)."""
    if isinstance(value, enum.Enum):  # a StrEnum is a str, but not text to redact
        return value
    if isinstance(value, str):
        return replace(value)
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        items = [_scrubbed(item, replace) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else type(value)(items)
    if isinstance(value, dict):
        pairs = [(_scrubbed(k, replace), _scrubbed(v, replace)) for k, v in value.items()]
        unchanged = all(k is old_k and v is old_v for (k, v), (old_k, old_v) in zip(pairs, value.items()))
        return value if unchanged else dict(pairs)
    if isinstance(value, msgspec.Struct):
        changed = {name: new for name in value.__struct_fields__
                   if (new := _scrubbed(old := getattr(value, name), replace)) is not old}
        return msgspec.structs.replace(value, **changed) if changed else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {field.name: new for field in dataclasses.fields(value) if field.init
                   if (new := _scrubbed(old := getattr(value, field.name), replace)) is not old}
        return dataclasses.replace(value, **changed) if changed else value
    return value
