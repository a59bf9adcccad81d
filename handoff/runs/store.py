"""Stored runs: one directory per run under ``.state/runs/``, named ``<UTC time>-<id>``.

A run is written into a hidden ``.partial-…`` directory first and renamed into place
when complete, so a reader never sees half a run: a run directory either holds its whole
``run.json`` or does not exist. Records never hold a secret (see record.py).
"""

from __future__ import annotations

import contextlib

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import msgspec

from handoff.bounded_read import read_bounded
from handoff.errors import UserError
from handoff.runs.record import RunRecord, UnreadableRun, decode, encode
from handoff.runtime_locator import PROJECT_ROOT

RUNS_DIR = PROJECT_ROOT / ".state" / "runs"
RECORD = "run.json"
# The largest record read: a 200-turn history's run is ~2 MB; one beyond this is refused
# unread, as unreadable, instead of being read whole into memory.
MAX_RECORD_BYTES = 256 << 20
PARTIAL = ".partial-"


class NoSuchRun(UserError):
    """No stored run answers to the reference (as opposed to one that cannot be read)."""


def save(record: RunRecord, root: Path = RUNS_DIR) -> Path:
    """Write ``record`` atomically; returns its directory."""
    root.mkdir(parents=True, exist_ok=True)
    partial = root / f"{PARTIAL}{record.id}"
    final = root / record.id
    try:
        partial.mkdir()
        (partial / RECORD).write_bytes(msgspec.json.format(encode(record), indent=1))
        os.rename(partial, final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return final


RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")  # new_run_id's form


def run_ids(root: Path = RUNS_DIR) -> list[str]:
    """Stored runs, oldest first: their ids sort by time; a directory of another name
    (copied in by hand: `latest`, `run-a`) sorts before them all, so that it is never
    taken for the latest run. A record that is not a regular file is listed (and then
    said to be unreadable), not passed over."""
    if not root.is_dir():
        return []
    found = [p.name for p in root.iterdir()
             if p.is_dir() and not p.name.startswith(".") and os.path.lexists(p / RECORD)]
    return sorted(found, key=lambda name: (RUN_ID.fullmatch(name) is not None, name))


class _Command(msgspec.Struct):
    command: str


def records(root: Path = RUNS_DIR, command: str | None = None) -> Iterator[RunRecord]:
    """The stored runs, newest first (of one command only, when given); a record this
    version cannot read is passed over."""
    for run_id in reversed(run_ids(root)):
        try:
            data = _record_bytes(root / run_id)
            if command is not None and msgspec.json.decode(data, type=_Command).command != command:
                continue
            yield decode(data)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError, UnreadableRun, RecursionError):
            continue


@dataclass(frozen=True)
class Found:
    path: Path
    record: RunRecord


def load(reference: str | None = None, root: Path = RUNS_DIR, command: str | None = None) -> Found:
    """A stored run: the latest when ``reference`` is None (the latest of ``command``'s
    runs, when given: ``run`` for the matrix, ``lab``, ``skew``); else its id, a unique
    prefix of it, ``latest``, or the path to a run directory or its run.json."""
    path = _latest_of(command, root) if reference is None and command else _resolve(reference, root)
    return load_at(path, reference)


def load_at(path: Path, reference: str | None = None) -> Found:
    """The run stored in the directory ``path`` itself (a listing's row: no name in it is
    looked up again, "latest" included)."""
    try:
        return Found(path, decode(_record_bytes(path)))
    except OSError as error:
        raise UserError(f"run {reference or 'latest'}: cannot read {path / RECORD}: {error.strerror}") from None
    except (msgspec.DecodeError, msgspec.ValidationError, UnreadableRun) as error:
        raise UserError(f"run {reference or 'latest'}: {path / RECORD} is not a run record this version can read "
                        f"({error})") from None


def _record_bytes(run_dir: Path) -> bytes:
    return read_bounded(run_dir / RECORD, MAX_RECORD_BYTES)


def _latest_of(command: str, root: Path) -> Path:
    for run_id in reversed(run_ids(root)):
        with contextlib.suppress(OSError, msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            if msgspec.json.decode(_record_bytes(root / run_id), type=_Command).command == command:
                return root / run_id
    raise UserError(f"no stored `handoff {command}` run in {root}: `handoff {command}` stores one each time it runs "
                    f"(`handoff runs` lists every kind; name a run to pick one)")


def _resolve(reference: str | None, root: Path) -> Path:
    if reference is None or reference == "latest":
        ids = run_ids(root)
        if not ids:
            raise UserError(f"no stored runs in {root}: `handoff run` stores one each time it runs")
        return root / ids[-1]
    given = Path(reference)
    if given.name == RECORD and given.is_file():
        return given.parent
    if given.is_dir() and (given / RECORD).is_file():
        return given
    if given.is_dir() and os.path.lexists(given / RECORD):  # never opened: a FIFO would block the reader
        raise UserError(f"{given / RECORD}: is not a regular file (a directory, a FIFO, a device or a link to one), "
                        f"so it is no run record")
    stored = run_ids(root)
    if reference in stored:  # a whole id is that run, even when it starts another's
        return root / reference
    matches = [run_id for run_id in stored if run_id.startswith(reference) or run_id.endswith(reference)]
    if len(matches) == 1:
        return root / matches[0]
    if not matches:
        raise NoSuchRun(f"no stored run {reference!r} in {root}: `handoff runs` lists them")
    raise UserError(f"run {reference!r} is ambiguous: it matches {', '.join(matches)}; give more of the id")
