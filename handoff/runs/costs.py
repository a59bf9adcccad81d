"""How long each scenario took when it last ran, kept next to the stored runs, so that the
next run can start the longest scenarios first by what they really cost rather than by a
guess from their steps.

It is a hint for scheduling only: a missing, stale or unreadable file makes the scheduler
fall back to its guess, and nothing a scenario proves depends on the order scenarios
start in. One small JSON object ``{scenario name: seconds}``, written atomically after
every stored run; a scenario that was skipped or crashed keeps its earlier figure.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from handoff.bounded_read import read_bounded
from handoff.runs.record import RunRecord

COSTS = "scenario-seconds.json"
MAX_BYTES = 1 << 20  # a figure for each of a few hundred scenarios; a larger file is no hint of ours
LONGEST = 1e6  # seconds: a figure beyond this (or not a number) is passed over


def load(root: Path) -> dict[str, float]:
    """The last measured seconds per scenario name; empty when there are none yet. A file
    that is not one (too large, not JSON, nested past the parser, not an object) is no
    hint, and a figure that is no time a scenario took (10**400, NaN, a boolean) is none."""
    try:
        found = json.loads(read_bounded(root / COSTS, MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {name: float(seconds) for name, seconds in found.items()
            if isinstance(name, str) and type(seconds) in (int, float) and 0 <= seconds <= LONGEST}


def update(root: Path, record: RunRecord) -> None:
    """Merge this run's scenario times into the file; a failure to write only loses a hint."""
    measured = {s.name: round(s.seconds, 3) for s in record.scenarios if not s.skipped and not s.crashed and s.steps}
    if not measured:
        return
    merged = {**load(root), **measured}
    partial = None
    with contextlib.suppress(OSError):
        descriptor, partial = tempfile.mkstemp(prefix=f".{COSTS}.", dir=root)  # O_EXCL: no link is followed
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(json.dumps(merged, indent=1, sort_keys=True))
        os.replace(partial, root / COSTS)
    with contextlib.suppress(OSError):
        if partial:
            Path(partial).unlink(missing_ok=True)
