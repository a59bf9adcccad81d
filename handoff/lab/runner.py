"""`handoff lab`: Lab 05 ("sessions") as the lab prints it, on the real runtime.

Why it exists next to `handoff run`: the lab's transcript is what a learner reads first
and compares against. This command prints that transcript in the same shape, from the
same prompts (:mod:`handoff.fact`) and the same SDK calls — ``create_session`` with an
id, close, ``resume_session`` by id, ``get_session_metadata``, ``list_sessions`` — and
runs the lab's exercises: the resume from a second process (``--resume ID``), a stable
id, a third turn, resuming the most recent session. The model is the witness by default,
so the answer can only name the fact if the runtime really sent turn 1 along.

Every SDK call goes through :class:`handoff.worker.sdk.Runtime` (the only module that
imports the SDK). The witness is a tracked child process and the runtime is the SDK's
child; both are gone when :func:`run_lab` returns or raises, also on Ctrl-C and SIGTERM.

Exit codes (returned, or carried by the exceptions): 0 the transcript completed and every
resumed answer named the fact; 1 it completed but a resumed answer did not (the context
did not survive); 2 bad input or configuration (:class:`UserError`: options, an unknown
session id, no stored session, no token, a refused key, an unreachable endpoint);
3 something else failed (:class:`LabFailure`).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace
from pathlib import Path
from typing import Callable

from handoff.errors import UserError
from handoff.inputs import temporary_directory
from handoff.lab.calls import Creator
from handoff.lab.options import LOG_DIR, LabOptions, Write
from handoff.lab.transcript import Lab
from handoff.processes import ProcessTracker, StopOnce, descendant_pids, kill_descendants_since
from handoff.runs.record import RunRecord
from handoff.hosts.local import ready_runtime
from handoff.witness.evidence import read_evidence


def run_lab(options: LabOptions, write: Write, warn: Write, keep: Callable[[RunRecord], None] | None = None,
            creator: Callable[[str], Creator | None] = lambda session_id: None) -> int:
    """Run the lab, writing the transcript line by line; returns 0 or 1 (see module doc).
    Nothing it started is left running when it returns or raises. ``keep`` is given the
    run's record (handoff/lab/recorder.py) once the runtime has started, however the lab
    ends. ``creator`` finds the stored lab run that created a session (for --show-calls)."""
    options.check()
    # Absolute, so the runtime (which gets it as COPILOT_HOME) and messages agree on it.
    options = replace(options, home=options.home.expanduser().absolute())
    runtime_path = ready_runtime()
    temporary_directory()
    try:
        (options.home / LOG_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"--home {options.home}: cannot create it ({error.strerror})") from None
    before = descendant_pids()
    tracker = ProcessTracker()
    lab = Lab(options, str(runtime_path), tracker, write, warn)
    lab.creator = creator
    with StopOnce() as stop:  # Ctrl-C or `kill` starts the cleanup; another one cannot cut it short
        try:
            # Cancelled at an await by the first signal: a KeyboardInterrupt raised from a
            # SIGTERM handler landed wherever Python was, now and then inside the SDK's or
            # asyncio's own bookkeeping, and the lab then hung in its cleanup.
            with sdk_log_to(options.home / LOG_DIR / "sdk.log"):
                return stop.run(lab.run)
        finally:
            with stop.shielded():
                tracker.stop_all()
                kill_descendants_since(before)  # the SDK's runtime, should its stop have failed
                if keep is not None and lab.recorder is not None and lab.recorder.lines:
                    keep(lab.recorder.record(read_evidence(lab.evidence_path)))
                lab.evidence_path.unlink(missing_ok=True)


# The SDK logs a failed request with its traceback ("copilot"), and after an interrupt its
# reader thread may still hand a response to a future the cancelled call gave up on, which
# asyncio reports as "Exception in callback ... InvalidStateError" ("asyncio").
QUIETED_LOGGERS = ("copilot", "asyncio")


@contextlib.contextmanager
def sdk_log_to(path: Path):
    """Send the SDK's and asyncio's records to a file (the lab's in its home, the chat's
    in its store): on a terminal their tracebacks would bury the one-line error the user
    is meant to read."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    saved = {}
    for name in QUIETED_LOGGERS:
        logger = logging.getLogger(name)
        saved[name] = logger.propagate
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield
    finally:
        for name, propagate in saved.items():
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).propagate = propagate
        handler.close()
