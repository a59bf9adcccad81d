"""Why a resumed answer did not name the value the lab expected, in the lab's own words.

"Did not carry turn 1" is only one possibility. The answer may name another value this
session was told: in an earlier run (`--resume ID --fact X` where X is not what was
told), or because the id was created more than once and a resume replays every
conversation under it (see docs/lab.md, 'A finding that corrects the lab'). The session's
event log says which values it was ever told and how many times it was created.
"""

from __future__ import annotations

from handoff.eventlog import parse_events
from handoff.fact import REMEMBER_PATTERN, Fact, unquote


def told_values(log: bytes | None, topic: str) -> list[str]:
    """Every value the session's log says it was told for ``topic``, in order."""
    if not log:
        return []
    events, _ = parse_events(log)
    values = []
    for event in events:
        data = event.get("data")
        if event.get("type") != "user.message" or not isinstance(data, dict) or not isinstance(data.get("content"), str):
            continue
        for match in REMEMBER_PATTERN.finditer(data["content"]):
            if match.group("topic") == topic and unquote(match.group("value")) not in values:
                values.append(unquote(match.group("value")))
    return values


def creations(log: bytes | None) -> int:
    if not log:
        return 0
    return sum(1 for event in parse_events(log)[0] if event.get("type") == "session.start")


def why_not_named(turn: int, answer: str | None, fact: Fact, log: bytes | None, told_here: bool) -> str:
    """The one-line message for a resumed answer that does not name ``fact``."""
    named = [value for value in told_values(log, fact.topic) if value != fact.value and Fact(value).is_in(answer)]
    if not named:
        return f"turn {turn}: the answer does not name {fact.value!r}: the resumed session did not carry turn 1 to the model"
    other = named[-1]
    created = creations(log)
    twice = (f"; the id was created {created} times ({created} session.start events in its log), so a resume "
             f"replays every conversation under it") if created > 1 else ""
    if told_here:
        return (f"turn {turn}: the answer names {other!r}, not {fact.value!r} told in this run: this session was told "
                f"{other!r} in another conversation under the same id{twice}, and the model answered from that one. "
                f"Continue a session with --resume instead of creating its id again")
    return (f"turn {turn}: the answer names {other!r}, which this session was told in an earlier run, not "
            f"{fact.value!r} (--fact): the context was carried{twice}; give --fact {other!r} to check for it")
