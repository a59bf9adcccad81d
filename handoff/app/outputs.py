"""The files a command is asked to write (--json, --html, -o): each replaced whole, so a
reader never sees half of one."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable

from handoff.checker.verdicts import RunJudgement
from handoff.report import formats
from handoff.runs.record import RunRecord
from handoff.runs.store import RECORD, RUNS_DIR
from handoff.scenario_files import SCENARIO_DIR


def read_by_the_tool(runs_dir: Path | None = None, *given: str | Path | None) -> tuple[Path, ...]:
    """The files no output may replace (inputs.writable_file's ``keep``): the scenarios,
    every stored run's record (in the default runs directory and ``runs_dir``) and what
    the command was given (a scenario's file, a run's directory: its record). Any other
    file, also one beside them, is the user's to overwrite."""
    records = [record for root in {RUNS_DIR, runs_dir or RUNS_DIR} for record in root.glob(f"*/{RECORD}")]
    named = [Path(name) / RECORD if Path(name).is_dir() else Path(name) for name in given if name]
    return (*SCENARIO_DIR.rglob("*.toml"), *records, *(path for path in named if path.is_file()))


def write_atomically(path: Path, data: bytes) -> None:
    """A reader never sees a half-written file. The temporary file beside it is a new one
    of a name nobody can guess (made with O_EXCL: a link placed there is never followed),
    and is gone whatever happens; only the path the user named is replaced (a link there
    too, never followed), a file with the permissions it had (a new one: as the umask says)."""
    was = path.lstat() if os.path.lexists(path) else None
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent or ".")
    try:
        with os.fdopen(descriptor, "wb") as out:
            kept = was is not None and stat.S_ISREG(was.st_mode)
            os.fchmod(out.fileno(), stat.S_IMODE(was.st_mode) if kept else 0o666 & ~UMASK)
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _read_umask() -> int:
    mask = os.umask(0o22)  # the only way to read it is to set it: done once, at import, before any thread
    os.umask(mask)
    return mask


UMASK = _read_umask()


def write_html(path: Path, record: RunRecord, judgement: RunJudgement, note: Callable[[str], None]) -> None:
    write_atomically(path, formats.rendered(record, judgement, "html").encode())
    note(f"HTML report: {path} (one file; open it in a browser, e.g. file://{path.absolute()})")


def write_outputs(record: RunRecord, judgement: RunJudgement, json_path: Path | None, html_path: Path | None,
                  note: Callable[[str], None]) -> None:
    """The run's record and judgement as JSON, and its HTML report, where they were asked for."""
    if json_path is not None:
        write_atomically(json_path, formats.as_json(record, judgement))
    if html_path is not None:
        write_html(html_path, record, judgement, note)
