"""The lease's fence: a writer changes a session's files only while it holds the session's
lease.

The lease alone keeps a second writer from resuming a session that is open. It does not
stop the first from writing after it lost the lease: a holder paused past its lease (a
stopped process, a long pause of its machine) wakes still holding the session open, while
the next writer has taken the lease and written. Without the fence, its next append lands
in the log the new owner writes to, and the new owner's receipt at close makes it durable.
The fence asks the registry before every call that changes the session's files, and
refuses a writer the lease no longer names.

What it cannot close: a call already past its check when the lease changes hands still
lands. Closing that needs the store to check the lease in the same transaction as the
write (a conditional write), which a SessionFs provider's calls have no room to ask.
"""

from __future__ import annotations

from dataclasses import dataclass

from handoff.stores.registry import Registry


class Superseded(PermissionError):
    """The writer no longer holds the session's lease: its change is refused, not written."""


@dataclass(frozen=True)
class Fence:
    registry: Registry
    session_id: str
    holder: str

    def check(self, change: str) -> None:
        """Refuse ``change`` (what the writer was about to do) unless the lease names this
        writer. A lease that ran out but that no one has taken still names it: nobody else
        can have written since."""
        held = self.registry.lease_holder(self.session_id)
        if held is None or held[0] != self.holder:
            raise Superseded(f"this writer no longer holds the session's lease: {change} refused, nothing written")
