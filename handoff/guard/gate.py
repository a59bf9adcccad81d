"""The guarded path: the one gate every guarded call that opens, lists, reveals or closes
a session goes through.

The raw SDK resumes any id it is given. The gate, kept in the registry's database,
refuses:

* an id the app did not mint for the caller (handoff/guard/ids.py) — for create,
  resume, metadata and close alike, and with the same words whether or not someone
  else's session has that id, so no answer confirms a guess;
* a session the caller does not own (the registry's owner);
* an id that exists already, on create, unless the step continues it (``reuse``);
* a log that changed since the last close (the receipt over its exact bytes);
* a log whose creating runtime is not the one the registry recorded, and a resume by a
  runtime older than the session's last writer unless the pair is declared known-good
  (handoff/guard/compat.py);
* a second writer while another holds the lease;
* a receipt write (at close) by anyone but the lease's holder.

A guarded listing (list, the most recent session, discovery in the registry) shows the
caller's own sessions only.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

from handoff.eventlog import parse_events, summarize
from handoff.guard.compat import downgrade_problem, origin_problem
from handoff.guard.ids import Minter, not_minted
from handoff.guard.receipt import Receipt, ReceiptUnreadable, changes_since
from handoff.stores.registry import Registry

LEASE_SECONDS = 3.0  # on the gate's clock: the wall clock in an app, the coordinator's lease clock in a run
DENIED = "access denied: no session with this id belongs to you"
EXISTS = ("a session with this id exists: creating it again is refused (a step continues it with `reuse = true`; "
          "the SDK's resume_session is the call that continues a conversation)")


class Refused(Exception):
    """The guard said no; the message says why without leaking what it protects."""


class Gate:
    def __init__(self, registry: Registry, minter: Minter, holder: str, reuse: bool,
                 known_good: tuple[tuple[str, str], ...] = (), clock: Callable[[], float] = time.time):
        self.registry = registry
        self.minter = minter
        self.principal = minter.owner
        self.holder = holder
        self.reuse = reuse
        self.known_good = known_good  # (last writer, resumer) downgrades declared safe
        # What leases are taken, renewed and judged live against. An app keeps the wall
        # clock; the tool's workers get the coordinator's lease clock, which moves only
        # when the coordinator says so, so whether a lease is live never depends on how
        # long a worker's runtime took to start.
        self.clock = clock
        self._renewing: asyncio.Task | None = None

    def admit_create(self, session_id: str) -> bool:
        """Check a create; True when it must become a resume (reuse of an existing id)."""
        if not self.minter.minted_for_me(session_id):
            raise Refused(str(not_minted(session_id)))
        owner = self.registry.owner_of(session_id)
        if owner is None:
            return False
        if owner != self.principal:  # cannot happen for an id minted for the caller; refuse all the same
            raise Refused(DENIED)
        if not self.reuse:
            raise Refused(EXISTS)
        return True

    def admit(self, session_id: str) -> None:
        """The caller may see or open this session: minted for them, and theirs."""
        if not self.minter.minted_for_me(session_id) or self.registry.owner_of(session_id) != self.principal:
            raise Refused(DENIED)

    def admit_resume(self, session_id: str, log: bytes | None, runtime_version: str = "") -> None:
        self.admit(session_id)
        stored = self.registry.receipt_of(session_id)
        if stored is not None:
            try:
                change = changes_since(Receipt.from_json(stored), log or b"")
            except ReceiptUnreadable as unreadable:
                raise Refused(f"the session's receipt cannot be checked: {unreadable}") from None
            if change:
                raise Refused(f"the session's log changed since its last close ({change})")
        self.admit_version(session_id, log, runtime_version)
        self.take_lease(session_id)

    def admit_version(self, session_id: str, log: bytes | None, runtime_version: str) -> None:
        """The log was made by the runtime the registry says, and this runtime is not older
        than the last one that wrote it (unless that pair is declared known-good)."""
        created, last_writer = self.registry.versions_of(session_id) or (None, None)
        logged = summarize(*parse_events(log or b"")).created_by
        problem = origin_problem(created, logged) or downgrade_problem(last_writer, runtime_version, self.known_good)
        if problem:
            raise Refused(problem)

    def take_lease(self, session_id: str) -> None:
        if not self.registry.take_lease(session_id, self.holder, LEASE_SECONDS, self.clock()):
            raise Refused("another writer holds this session's lease: resume refused")

    def keep_lease(self, session_id: str) -> None:
        """Renew the lease while the session is open (until :meth:`closed`); a holder
        killed meanwhile stops renewing, so its lease runs out and a later writer may
        take over."""

        async def renew() -> None:
            while True:
                await asyncio.sleep(LEASE_SECONDS / 3)
                self.registry.take_lease(session_id, self.holder, LEASE_SECONDS, self.clock())

        self._renewing = asyncio.get_running_loop().create_task(renew())

    def closed(self, session_id: str, log: bytes | None) -> None:
        """At close: leave a receipt for the next resume, and let the next writer in —
        only as the session's owner and the holder of its lease."""
        if self._renewing is not None:
            self._renewing.cancel()
        self.admit(session_id)
        holder = self.registry.lease_holder(session_id)
        if holder is None or holder[0] != self.holder:
            raise Refused("this writer no longer holds the session's lease: no receipt was written")
        self.registry.record_receipt(session_id, Receipt.of(log or b"").to_json())
        self.registry.release_lease(session_id, self.holder)

    def visible(self, session_ids: list[str]) -> list[str]:
        """The caller's own sessions among ``session_ids``."""
        return [sid for sid in session_ids
                if self.minter.minted_for_me(sid) and self.registry.owner_of(sid) == self.principal]
