"""The guarded path: what an app checks before it lets a principal at a session.

The raw SDK resumes any id it is given. The gate, kept in the registry's database,
refuses: ids that could carry secrets (at create), an id that already exists unless
reuse is asked for, a principal who does not own the session (with the same words
whether the id exists or not, so a refusal does not confirm a guess), a log that
changed since the last close (receipt), and a second writer while another holds the
lease.
"""

from __future__ import annotations

import asyncio

from handoff.guard.ids import IdRejected, check_session_id
from handoff.guard.receipt import Receipt, changes_since
from handoff.registry import Registry

LEASE_SECONDS = 3.0
DENIED = "access denied: no session with this id belongs to you"


class Refused(Exception):
    """The guard said no; the message says why without leaking what it protects."""


class Gate:
    def __init__(self, registry: Registry, principal: str, holder: str, reuse: bool = False):
        self.registry = registry
        self.principal = principal
        self.holder = holder
        self.reuse = reuse
        self._renewing: asyncio.Task | None = None

    def admit_create(self, session_id: str) -> bool:
        """Check a create; True when it must become a resume (reuse of an existing id)."""
        try:
            check_session_id(session_id)
        except IdRejected as rejected:
            raise Refused(str(rejected)) from None
        owner = self.registry.owner_of(session_id)
        if owner is None:
            return False
        if not self.reuse:
            raise Refused("a session with this id exists: creating it again is refused (pass --reuse to continue it)")
        if owner != self.principal:
            raise Refused(DENIED)
        return True

    def admit(self, session_id: str) -> None:
        if self.registry.owner_of(session_id) != self.principal:
            raise Refused(DENIED)

    def admit_resume(self, session_id: str, log_text: str | None) -> None:
        self.admit(session_id)
        stored = self.registry.receipt_of(session_id)
        if stored is not None:
            change = changes_since(Receipt.from_json(stored), log_text or "")
            if change:
                raise Refused(f"the session's log changed since its last close ({change})")
        self.take_lease(session_id)

    def take_lease(self, session_id: str) -> None:
        if not self.registry.take_lease(session_id, self.holder, LEASE_SECONDS):
            raise Refused("another writer holds this session's lease: resume refused")

    def keep_lease(self, session_id: str) -> None:
        """Renew the lease while the session is open (until :meth:`closed`); a holder
        killed meanwhile stops renewing, so its lease runs out and a later writer may
        take over."""

        async def renew() -> None:
            while True:
                await asyncio.sleep(LEASE_SECONDS / 3)
                self.registry.take_lease(session_id, self.holder, LEASE_SECONDS)

        self._renewing = asyncio.get_running_loop().create_task(renew())

    def closed(self, session_id: str, log_text: str | None) -> None:
        """At close: leave a receipt for the next resume, and let the next writer in."""
        if self._renewing is not None:
            self._renewing.cancel()
        self.registry.record_receipt(session_id, Receipt.of(log_text or "").to_json())
        self.registry.release_lease(session_id, self.holder)

    def visible(self, session_ids: list[str]) -> list[str]:
        return [sid for sid in session_ids if self.registry.owner_of(sid) == self.principal]
