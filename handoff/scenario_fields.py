"""Reading a scenario file's fields: its text, and typed values pulled out of its TOML
tables, each wrong one explained in one line that names the file, the place and the field
(handoff/scenario_files.py says which fields a scenario has)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from handoff.errors import UserError
from handoff.versions import well_formed, well_formed_sdk


def read_text(path: Path) -> str:
    """A scenario file's text, or an error that says how to save it."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UserError(f"{path}: cannot read: {error.strerror or error}") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raise UserError(f"{path}: starts with a UTF-8 byte order mark (BOM), which TOML does not allow: "
                        f"save it as UTF-8 without BOM")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: is not UTF-8 text (byte {error.start} cannot be decoded): save it as UTF-8") from None


class Fields:
    """Pulls typed fields out of a TOML table and explains what is wrong in one line."""

    def __init__(self, path: Path, table: dict[str, Any], where: str = ""):
        self.path, self.table, self.where = path, table, where

    def fail(self, field: str, problem: str) -> UserError:
        place = f"{self.path}: {self.where + ': ' if self.where else ''}field '{field}'"
        return UserError(f"{place} {problem}")

    def get(self, field: str, kind: type | tuple[type, ...], default: Any = ..., choices: tuple = ()) -> Any:
        if field not in self.table:
            if default is ...:
                raise self.fail(field, "is missing")
            return default
        value = self.table[field]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wanted = " or ".join(k.__name__ for k in kinds)
            raise self.fail(field, f"must be {wanted}, got {type(value).__name__} {value!r}")
        if choices and value not in choices:
            raise self.fail(field, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def text(self, field: str, default: str, pattern: re.Pattern[str]) -> str:
        value = self.get(field, str, default)
        if not pattern.fullmatch(value):
            raise self.fail(field, f"must be letters, digits, '_' or '-' (at most 40), got {value!r}")
        return value

    def number(self, field: str, default: float, most: float) -> float:
        """A number of seconds from 0 to ``most`` (not negative, not infinite, not NaN)."""
        value = float(self.get(field, (int, float), default))
        if not 0 <= value <= most:  # also false for NaN
            raise self.fail(field, f"must be a number of seconds from 0 to {most:g}, got {value!r}")
        return value

    def version(self, field: str) -> str | None:
        value = self.get(field, str, None)
        if value is not None and not well_formed(value):
            raise self.fail(field, f'must be a version number such as "1.0.92", got {value!r}')
        return value

    def sdk(self) -> str | None:
        value = self.get("sdk", str, None)
        if value is not None and not well_formed_sdk(value):
            raise self.fail("sdk", f'must be a version number such as "1.0.24", or "node@1.0.14" for the Node.js '
                                   f'SDK, got {value!r}')
        return value

    def reject_unknown(self, known: set[str]) -> None:
        unknown = sorted(set(self.table) - known)
        if unknown:
            raise self.fail(unknown[0], f"is not a known field (known: {', '.join(sorted(known))})")
