"""Handoff receipts: a hash chain over a session's event log, taken at close and checked
before the next resume.

The chain covers the log's exact bytes, cut into lines at ``\\n`` only — the way the
runtime reads events.jsonl — so no byte can change without the chain noticing: not a
``\\r``, not a U+2028, not an invalid UTF-8 sequence. (Cutting at every line break
Python knows, as ``str.splitlines`` does, let a log with two events joined by ``\\r``
pass as unchanged while the runtime read one event fewer.)

Link *i* is ``sha256(link[i-1] + line[i])``, so a change to a line changes every link
from there on. Keeping every link lets the check say *what* changed — the first
differing event, a truncation, or events appended by a writer that took no receipt.
Anything the check cannot read (a receipt that is not one) is a refusal, never a pass.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

GENESIS = b"\0" * 32


def lines_of(log: bytes) -> list[bytes]:
    """The log's lines as the runtime sees them: cut at ``\\n``, a final empty piece
    (after the last newline) left out, every other piece kept, blank or not."""
    pieces = log.split(b"\n")
    return pieces[:-1] if pieces and pieces[-1] == b"" else pieces


def chain(lines: list[bytes]) -> list[str]:
    links, previous = [], GENESIS
    for line in lines:
        previous = hashlib.sha256(previous + line).digest()
        links.append(previous.hex())
    return links


class ReceiptUnreadable(ValueError):
    """A stored receipt that cannot be read: the check fails closed."""


@dataclass(frozen=True)
class Receipt:
    event_count: int
    links: tuple[str, ...]
    digest: str  # sha256 of the whole log: what the lines cannot show (a final newline) it does

    @classmethod
    def of(cls, log: bytes) -> Receipt:
        links = chain(lines_of(log))
        return cls(len(links), tuple(links), hashlib.sha256(log).hexdigest())

    def to_json(self) -> str:
        return json.dumps({"event_count": self.event_count, "links": list(self.links), "digest": self.digest})

    @classmethod
    def from_json(cls, text: str) -> Receipt:
        try:
            data = json.loads(text)
            links, count, digest = tuple(data["links"]), data["event_count"], data["digest"]
        except (ValueError, TypeError, KeyError) as error:
            raise ReceiptUnreadable(f"the stored receipt cannot be read ({type(error).__name__})") from None
        hashes = [*links, digest]
        if count != len(links) or not all(isinstance(value, str) and len(value) == 64 for value in hashes):
            raise ReceiptUnreadable("the stored receipt is not consistent with itself")
        return cls(count, links, digest)


def changes_since(receipt: Receipt, log: bytes) -> str | None:
    """What changed in the log since the receipt was taken, or None if nothing did."""
    current = chain(lines_of(log))
    for index, (then, now) in enumerate(zip(receipt.links, current)):
        if then != now:
            return f"edited: event {index + 1} of {receipt.event_count} differs from the receipt"
    if len(current) < receipt.event_count:
        return f"truncated or rolled back: {receipt.event_count - len(current)} of {receipt.event_count} events are gone"
    if len(current) > receipt.event_count:
        return f"extended without a receipt: {len(current) - receipt.event_count} events were appended after the last close"
    if hashlib.sha256(log).hexdigest() != receipt.digest:
        return "edited: the events are the same but the log's bytes are not (its final line ending)"
    return None
