"""The guard's version rule: a session moves to the same or a newer runtime, never back.

Why: a runtime resumes a session by reading the event log other runtimes wrote, and
nothing in the log or the SDK says which readers understand it. Measured here (docs/versions.md,
"Compatible runtime"): runtime 1.0.92 resuming a session that 1.0.102 wrote loads 7 of
its 8 events and says nothing — it skips the event type it does not know — and on
runtime 1.0.40 an SDK of 1.0.25 or later never receives the answer its turn wrote to
the log. An upgrade plan can promise "resume on the newer runtime only"; it cannot
promise what an older reader does with a newer writer's log. So a resume by a runtime
older than the session's last writer is refused, naming both versions, unless the
deployment has measured that pair and declared it known-good.

Pure functions of version strings: the gate (gate.py) asks, the registry remembers.
"""

from __future__ import annotations

from handoff.versions import older, well_formed


def downgrade_problem(last_writer: str | None, resumer: str, known_good: tuple[tuple[str, str], ...] = ()) -> str | None:
    """Why runtime ``resumer`` may not resume a session ``last_writer`` wrote last, or None.
    A session the registry knows no writer for (made before versions were recorded) is
    not judged here."""
    if not last_writer or not well_formed(last_writer) or not well_formed(resumer):
        return None
    if not older(resumer, last_writer) or (last_writer, resumer) in known_good:
        return None
    return (f"runtime {resumer} may not resume a session last written by runtime {last_writer}: an older runtime "
            f"can misread a newer one's log (declare the pair known-good once it is measured)")


def origin_problem(recorded: str | None, logged: str | None) -> str | None:
    """Why the registry's creating runtime and the log's ``session.start`` disagree, or None.
    Either can be missing: a session created before versions were recorded, or a log whose
    first turn was never written."""
    if not recorded or not logged or recorded == logged:
        return None
    return (f"the registry says runtime {recorded} created this session but its log's session.start says "
            f"{logged}: the log is not the one this registry entry describes")
