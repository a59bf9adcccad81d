"""Handoff receipts: a hash chain over a session's event log, taken at close and checked
before the next resume.

Link *i* is ``sha256(link[i-1] + line[i])``, so any change to a line changes every link
from there on. Keeping every link (a few dozen bytes per event) lets the check say
*what* changed — the first differing event, a truncation, or events appended by a writer
that took no receipt — instead of only that something did.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

GENESIS = "0" * 64


def chain(lines: list[str]) -> list[str]:
    links, previous = [], GENESIS
    for line in lines:
        previous = hashlib.sha256((previous + line).encode()).hexdigest()
        links.append(previous)
    return links


def log_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@dataclass(frozen=True)
class Receipt:
    event_count: int
    links: tuple[str, ...]

    @classmethod
    def of(cls, log_text: str) -> Receipt:
        links = chain(log_lines(log_text))
        return cls(len(links), tuple(links))

    def to_json(self) -> str:
        return json.dumps({"event_count": self.event_count, "links": list(self.links)})

    @classmethod
    def from_json(cls, text: str) -> Receipt:
        data = json.loads(text)
        return cls(data["event_count"], tuple(data["links"]))


def changes_since(receipt: Receipt, log_text: str) -> str | None:
    """What changed in the log since the receipt was taken, or None if nothing did."""
    current = chain(log_lines(log_text))
    for index, (then, now) in enumerate(zip(receipt.links, current)):
        if then != now:
            return f"edited: event {index + 1} of {receipt.event_count} differs from the receipt"
    if len(current) < receipt.event_count:
        return f"truncated or rolled back: {receipt.event_count - len(current)} of {receipt.event_count} events are gone"
    if len(current) > receipt.event_count:
        return f"extended without a receipt: {len(current) - receipt.event_count} events were appended after the last close"
    return None
