"""The coordinator's lease clock: the time guarded workers take, renew and judge leases at.

A lease is a promise in time ("nobody else writes for 3 s"), and a scenario about leases
asks what happens before and after that time runs out. Timed by the wall clock, the
answer raced the machine: a worker whose runtime took 5 s to start (the first start after
a clone unpacks the runtime) asked for a lease that had already run out, and a step meant
to be refused was let in. So in a run the lease clock belongs to the coordinator. It
starts at 0 and stands still for a whole step — however long a worker takes to start,
a live lease stays live — and moves only before a step that asks for it
(``after = "lease-expired"``): the coordinator reads the lease the session has in the
registry and sets the clock just past its end. A step that then finds the lease taken
shows a bug, not a slow machine.

What it leaves out, and says so in the scenario's ``does_not_prove``: how long a lease
should be in wall-clock time, and holders that are paused rather than dead.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from handoff.guard.gate import LEASE_SECONDS
from handoff.stores.database import connect
from handoff.stores.registry import Registry

PAST_THE_END = LEASE_SECONDS / 6  # how far past a lease's end the clock is set: any step past it would do


@dataclass
class Expiry:
    """What the coordinator saw when it let a lease run out, for the step's record."""

    before: float  # the clock before
    after: float  # the clock now
    holder: str | None  # whose lease it was (None: there was none)
    expired_at: float | None

    def note(self) -> str:
        if self.holder is None:
            return (f"lease clock {self.after:g} s: the session had no lease to run out (the coordinator looked "
                    f"before the step started)")
        return (f"lease clock {self.before:g} s -> {self.after:g} s: the coordinator saw the lease of "
                f"{self.holder} end at {self.expired_at:g} s before this step started")


class LeaseClock:
    def __init__(self) -> None:
        self.now = 0.0

    def run_out(self, registry_url: str | None, session_id: str | None) -> Expiry:
        """Move the clock past the end of the session's lease, as read from its registry."""
        held = None
        if registry_url and session_id:
            held = _lease_of(registry_url, session_id)
        before = self.now
        if held is None:
            return Expiry(before, before, None, None)
        holder, expires_at = held
        self.now = max(self.now, expires_at + PAST_THE_END)
        return Expiry(before, self.now, holder, expires_at)


def _lease_of(url: str, session_id: str) -> tuple[str, float] | None:
    database = connect(url)
    try:
        registry = Registry.existing(database)
        return None if registry is None else registry.lease_holder(session_id)
    finally:
        with contextlib.suppress(Exception):
            database.close()
