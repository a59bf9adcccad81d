"""What `handoff skew` expects of each cell, as data: ``scenarios/skew/expected.toml``.

A list of rules, tried in order; the first whose fields all match a cell gives the
verdict its question should get, and why. A field left out matches every version, so the
last rule is usually the general case and the ones before it the measured exceptions.
A mistake names the file, the rule and the field (exit code 2).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from handoff.errors import UserError
from handoff.scenario_files import SCENARIO_DIR
from handoff.versions import well_formed, well_formed_sdk
from handoff.words import EXPECTABLE, TELL_EXPECTABLE

EXPECTED_FILE = SCENARIO_DIR / "skew" / "expected.toml"
SIDES = ("created_runtime", "created_sdk", "resumed_runtime", "resumed_sdk")


@dataclass(frozen=True)
class Pair:
    """A runtime and the SDK that drives it: one row or column of the grid."""

    runtime: str
    sdk: str

    @property
    def label(self) -> str:
        return f"{self.runtime}/{self.sdk}"


@dataclass(frozen=True)
class Rule:
    expect: str
    because: str
    versions: dict[str, tuple[str, ...]]  # a field of SIDES -> the versions it matches; absent: any

    def matches(self, created: Pair, resumed: Pair) -> bool:
        actual = {"created_runtime": created.runtime, "created_sdk": created.sdk,
                  "resumed_runtime": resumed.runtime, "resumed_sdk": resumed.sdk}
        return all(actual[field] in wanted for field, wanted in self.versions.items())


def load(path: Path = EXPECTED_FILE) -> list[Rule]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UserError(f"{path}: cannot read: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise UserError(f"{path}: not valid TOML: {error}") from None
    tables = data.get("rules")
    if not isinstance(tables, list) or not tables:
        raise UserError(f"{path}: needs at least one [[rules]] table")
    return [_rule(path, number, table) for number, table in enumerate(tables, 1)]


def load_tell_rules(path: Path = EXPECTED_FILE) -> list[Rule]:
    """The optional ``[[tell_rules]]``: what the creating process's tell is expected to come
    to (``expect_tell``), for the pairs where it is not simply told."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))  # load() has already read it once
    tables = data.get("tell_rules", [])
    if not isinstance(tables, list):
        raise UserError(f"{path}: tell_rules must be [[tell_rules]] tables")
    return [_rule(path, number, table, "expect_tell", TELL_EXPECTABLE) for number, table in enumerate(tables, 1)]


def _rule(path: Path, number: int, table: dict, key: str = "expect", allowed: tuple[str, ...] = EXPECTABLE) -> Rule:
    def fail(field: str, problem: str) -> UserError:
        return UserError(f"{path}: rule {number}: field '{field}' {problem}")

    if not isinstance(table, dict):
        raise UserError(f"{path}: rule {number} must be a table")
    unknown = sorted(set(table) - {key, "because", *SIDES})
    if unknown:
        raise fail(unknown[0], f"is not a known field (known: {key}, because, {', '.join(SIDES)})")
    expect = table.get(key)
    if expect not in allowed:
        raise fail(key, f"must be one of {', '.join(allowed)}, got {expect!r}")
    because = table.get("because")
    if not isinstance(because, str) or not because.strip():
        raise fail("because", "is missing: say why this is expected, from what was measured")
    versions = {}
    for field in SIDES:
        if field in table:
            wanted = table[field]
            valid = well_formed_sdk if field.endswith("_sdk") else well_formed
            if not isinstance(wanted, list) or not wanted or not all(isinstance(v, str) and valid(v) for v in wanted):
                raise fail(field, f'must be a list of versions such as ["1.0.92"], got {wanted!r}')
            versions[field] = tuple(wanted)
    return Rule(expect, because, versions)


def expectation(rules: list[Rule], created: Pair, resumed: Pair) -> Rule:
    rule = next((rule for rule in rules if rule.matches(created, resumed)), None)
    if rule is None:
        raise UserError(f"the expected cells have no rule for created by {created.label}, resumed by {resumed.label}: "
                        f"end the file with a rule that has no version fields")
    return rule
