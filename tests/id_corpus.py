"""The two corpora the id rules (handoff/guard/ids.py) are judged against, and the
confusion table they make in docs/stores-and-security.md.

* **must pass**: what apps and the SDK really use as session ids: random UUIDs (what the
  SDK makes when no id is given), the guard's own minted ids, the patterns of the SDK's
  session-persistence guide (``user-{userId}-{taskId}``, ``tenant-{tenantId}-{workflow}``,
  ``{userId}-{taskId}-{timestamp}`` in epoch seconds and milliseconds), dates and
  date-times, counters. None may be refused or hidden.
* **must be caught**: tokens and keys, e-mail addresses, phone numbers as people write
  them, card numbers that pass the Luhn check; alone and inside otherwise harmless ids.
  Every one must be refused, and hidden in reports.

Everything is generated from fixed seeds: the same corpus on every run.
``python -m tests.id_corpus`` writes the table into the docs (a test fails while the
table there is not the one the rules make).
"""

from __future__ import annotations

import random
import re
import sys
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs" / "stores-and-security.md"
BLOCK = re.compile(r"(<!-- id-rules: begin[^>]*-->\n).*?(<!-- id-rules: end -->)", re.S)
UUIDS = 100_000
# Epoch seconds of ten digits starting with 1: 2001-09-09 to 2033-05-18 (the rule leaves
# the ends of 2001 and 2033 to numbers: 98x... and 201... are phone numbers there).
EPOCH_2001, EPOCH_2033 = 1_000_000_000, 2_000_000_000

USERS = ("alice", "bob", "u42", "user-7f3a", "carol.smith")
TASKS = ("deploy", "code-review", "refactor-auth", "task-17", "summarise")


@dataclass(frozen=True)
class Group:
    name: str
    must_pass: bool
    ids: tuple[str, ...]


def _uuids(rng: random.Random) -> tuple[str, ...]:
    return tuple(str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(UUIDS))


def _minted() -> tuple[str, ...]:
    from handoff.guard.ids import Minter

    minters = [Minter(bytes([number]) * 32, owner) for number, owner in enumerate(("alice", "bob", "carol"))]
    return tuple(minter.new() for minter in minters for _ in range(100)) + tuple(
        minter.for_key(f"case-{case}") for minter in minters for case in range(100))


def _guide(rng: random.Random) -> tuple[str, ...]:
    ids = [f"user-{user}-{task}" for user in USERS for task in TASKS]
    ids += [f"user-{rng.randrange(1, 10**7)}-task-{rng.randrange(1, 10**5)}" for _ in range(200)]  # user-123-task-456
    ids += [f"tenant-{tenant}-{flow}" for tenant in ("acme", "t-0042", "globex", "9981")
            for flow in ("onboarding", "weekly-report", "triage")]
    for _ in range(1_000):
        seconds = rng.randrange(EPOCH_2001, EPOCH_2033)
        user, task = rng.choice(USERS), rng.choice(TASKS)
        ids += [f"{user}-{task}-{seconds}", f"{user}-{task}-{seconds * 1000 + rng.randrange(1000)}"]
    return tuple(ids)


def _dates(rng: random.Random) -> tuple[str, ...]:
    ids = []
    for _ in range(1_000):
        y, m, d = rng.randrange(2001, 2034), rng.randrange(1, 13), rng.randrange(1, 29)
        h, mi, s = rng.randrange(24), rng.randrange(60), rng.randrange(60)
        ids += [f"run-{y}-{m:02d}-{d:02d}", f"order-{y}{m:02d}{d:02d}-{rng.randrange(10000):04d}",
                f"{y}-{m:02d}-{d:02d}T{h:02d}-{mi:02d}-{s:02d}", f"batch-{y}{m:02d}{d:02d}{h:02d}{mi:02d}{s:02d}",
                f"report-{y}{m:02d}{d:02d}{h:02d}{mi:02d}"]
    return tuple(ids)


def _counters(rng: random.Random) -> tuple[str, ...]:
    return tuple(f"{kind}-{number:0{width}d}" for kind in ("order", "ticket", "chat", "case")
                 for width in (4, 6) for number in rng.sample(range(10**width), 100))


def _luhn_completed(digits: str) -> str:
    total = 0
    for index, digit in enumerate(reversed(digits)):
        value = int(digit) * (2 if index % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return digits + str((10 - total % 10) % 10)


def _cards(rng: random.Random) -> tuple[str, ...]:
    numbers = [_luhn_completed(prefix + "".join(rng.choice("0123456789") for _ in range(15 - len(prefix))))
               for prefix in ("4", "51", "37", "6011") for _ in range(5)]
    return tuple(numbers) + tuple("-".join(n[i:i + 4] for i in range(0, 16, 4)) for n in numbers[:5])


TOKENS = (  # each prefix GitHub issues, then other providers' keys detect-secrets knows
    "ghp_0123456789abcdefghijABCDEFGHIJ012345", "gho_16C7e42F292c6912E7710c838347Ae178B4a",
    "ghu_0123456789abcdefghijABCDEFGHIJ012345", "ghs_0123456789abcdefghijABCDEFGHIJ012345",
    "ghr_0123456789abcdefghijABCDEFGHIJ012345", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    "AKIAIOSFODNN7EXAMPLE", "xoxb-123456789012-1234567890123-abcdefghij", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "glpat-abcdefghij0123456789", "SK0123456789abcdef0123456789abcdef",
    "sk-proj-abcdefghijklmnopqrstuvwx", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
)
EMAILS = ("alice@example.com", "carol.smith+chat@mail.example.org", "o.brien@acme.co.uk", "x_y@corp-mail.example.net")
PHONES = (  # real numbering plans, written as people write them: E.164 with and without +, national forms
    "+14155550123", "14155550123", "4155550123", "415-555-0123", "(415)555-0123", "415.555.0123", "+1-212-555-0147",
    "2012345678", "0980123456", "0991234567",  # near what a time looks like: New Jersey, France, Italy
    "+442079460958", "00442079460958", "020-7946-0958", "07700-900123",
    "+493012345678", "030-12345678", "0171-2345678",
    "+33123456789", "01.23.45.67.89", "06-12-34-56-78",
    "+919876543210", "9876543210", "+5511987654321", "(11)98765-4321",
    "+81312345678", "03-1234-5678", "+61291234567", "02-9123-4567",
)


def _embedded(found: tuple[str, ...]) -> tuple[str, ...]:
    """Each finding alone, and inside an otherwise harmless id, as an id may carry it:
    between words, after letters, and beside other digits (a counter, a version)."""
    return (found + tuple(f"case-{item}-chat" for item in found) + tuple(f"cust{item}" for item in found[:3])
            + tuple(f"order-12-{item}" for item in found[:3]) + tuple(f"user42-{item}-3" for item in found[:3]))


def groups() -> list[Group]:
    rng = random.Random(52)
    return [
        Group(f"random UUIDs (uuid4, {UUIDS:,})", True, _uuids(rng)),
        Group("the guard's minted ids", True, _minted()),
        Group("the SDK guide's patterns (ids, tenants, epoch s and ms of 2001-2033)", True, _guide(rng)),
        Group("dates and date-times", True, _dates(rng)),
        Group("counters", True, _counters(rng)),
        Group("tokens and keys", False, _embedded(TOKENS)),
        Group("e-mail addresses", False, _embedded(EMAILS)),
        Group("phone numbers", False, _embedded(PHONES)),
        Group("card numbers (Luhn)", False, _embedded(_cards(rng))),
    ]


@dataclass(frozen=True)
class Judged:
    group: Group
    refused: int  # ids a rule refuses (secret_shape)
    hidden: int  # ids a report hides (redacted)
    rules: Counter  # the rule that refused, per id
    wrong: tuple[str, ...]  # a few ids judged against their group's side, for the failure message


def judge(group: Group) -> Judged:
    from handoff.guard.ids import redacted, secret_shape

    rules: Counter = Counter()
    hidden, wrong = 0, []
    for session_id in group.ids:
        rule = secret_shape(session_id)
        if rule:
            rules[rule] += 1
        shown = redacted(session_id) != session_id
        hidden += shown
        if (rule is not None or shown) == group.must_pass:
            wrong.append(session_id)
    return Judged(group, sum(rules.values()), hidden, rules, tuple(wrong[:5]))


def table(judged: list[Judged]) -> str:
    lines = ["| corpus | ids | must | refused | hidden in reports | by rule |", "|---|---|---|---|---|---|"]
    for one in judged:
        by_rule = "; ".join(f"{rule} ({count})" for rule, count in sorted(one.rules.items())) or "—"
        lines.append(f"| {one.group.name} | {len(one.group.ids):,} | {'pass' if one.group.must_pass else 'be caught'} "
                     f"| {one.refused:,} | {one.hidden:,} | {by_rule} |")
    return "\n".join(lines) + "\n"


def documented() -> str | None:
    found = BLOCK.search(DOCS.read_text(encoding="utf-8"))
    return None if found is None else found.group(0)[len(found.group(1)):-len(found.group(2))]


def write(text: str) -> None:
    docs = DOCS.read_text(encoding="utf-8")
    DOCS.write_text(BLOCK.sub(lambda found: found.group(1) + text + found.group(2), docs, count=1), encoding="utf-8")


if __name__ == "__main__":
    write(table([judge(group) for group in groups()]))
    print(f"wrote the id rules' table into {DOCS}", file=sys.stderr)
