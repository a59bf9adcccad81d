"""How a worker opens, finds and closes sessions: raw, as an app with the SDK alone would,
or guarded, with every such call going through the gate (handoff/guard/gate.py).

Both keep the registry (owners, where and when sessions were made and resumed) when the
store has one; only the guarded path checks it. The interpreter never calls the runtime
to open, list or reveal a session except through one of these two, so a guarded step
has no path around the gate.
"""

from __future__ import annotations

import time
from typing import Any

from handoff.guard.gate import Gate
from handoff.guard.ids import Minter
from handoff.worker.sdk import SDK_VERSION, Runtime, StoredSession
from handoff.worker.store import DatabaseStore, HomeStore


class Sessions:
    """The raw SDK: any id is opened, listed and described for anyone who asks."""

    def mint(self, business_key: str | None) -> str:
        raise LookupError("minting ids is part of the guarded path: set `guarded = true` on the step")

    def __init__(self, runtime: Runtime, store: HomeStore | DatabaseStore, owner: str, hostname: str):
        self.runtime = runtime
        self.store = store
        self.registry = store.registry
        self.owner = owner
        self.hostname = hostname
        self.runtime_version = ""

    async def create(self, session_id: str | None) -> tuple[Any, str, bool]:
        """A new session (``session_id`` None: the runtime picks one); returns the session,
        its id and whether an existing one was continued instead (guarded reuse)."""
        session = await self.runtime.create(session_id)
        created = self.runtime.session_id(session)
        if self.registry:
            self.registry.created(created, self.owner, self.hostname, self.runtime_version, SDK_VERSION)
        return session, created, False

    async def resume(self, session_id: str, runtime: Runtime | None = None) -> Any:
        session = await (runtime or self.runtime).resume(session_id)
        if self.registry:
            self.registry.resumed(session_id, self.hostname, self.runtime_version, SDK_VERSION)
        return session

    async def listed(self) -> list[StoredSession]:
        """The runtime's own listing (list_sessions)."""
        return await self.runtime.list()

    async def metadata(self, session_id: str) -> StoredSession | None:
        return await self.runtime.metadata(session_id)

    def registered(self) -> list[str]:
        """The registry's sessions, most recently active first (discovery across hosts)."""
        if not isinstance(self.store, DatabaseStore):
            raise LookupError("discover needs a database store with a registry")
        return [s.session_id for s in self.store.registry.sessions()]

    async def close(self, session: Any, session_id: str | None) -> None:
        await self.runtime.close(session)


class GuardedSessions(Sessions):
    """Every call checked by the gate first: ids at create, owners, receipts, versions, leases."""

    def __init__(self, runtime: Runtime, store: HomeStore | DatabaseStore, owner: str, hostname: str, holder: str,
                 reuse: bool, app_key: bytes, known_good: tuple[tuple[str, str], ...] = (),
                 lease_clock: float | None = None):
        super().__init__(runtime, store, owner, hostname)
        if self.registry is None:
            raise LookupError("a guarded step needs a registry (a database store or a registry file)")
        if not app_key:
            raise LookupError("a guarded step needs the app's key for minting ids (the coordinator gives it)")
        self.holder = holder
        self.minter = Minter(app_key, owner)
        self.known_good = known_good
        # The coordinator's lease clock stands still for the whole step (None: the wall clock).
        self.clock = time.time if lease_clock is None else (lambda: lease_clock)
        self.gate = Gate(self.registry, self.minter, holder, reuse, known_good, self.clock)

    def mint(self, business_key: str | None) -> str:
        """A new id (None), or the id of the app's case ``business_key``: either way bound
        to this owner, and the only kind of id a guarded create accepts."""
        return self.minter.new() if business_key is None else self.minter.for_key(business_key)

    async def create(self, session_id: str | None) -> tuple[Any, str, bool]:
        if session_id is not None and self.gate.admit_create(session_id):
            return await self.resume(session_id), session_id, True  # reuse: the old conversation continues
        session, created, _ = await super().create(session_id)
        self.gate.take_lease(created)
        self.gate.keep_lease(created)
        return session, created, False

    async def resume(self, session_id: str, runtime: Runtime | None = None) -> Any:
        # A second runtime in this worker is a second writer: it holds no lease of its own.
        gate = self.gate if runtime is None else Gate(self.registry, self.minter, f"{self.holder}:second", reuse=False,
                                                      known_good=self.known_good, clock=self.clock)
        gate.admit_resume(session_id, self.store.events_log(session_id), self.runtime_version)
        if runtime is None:
            self.gate.keep_lease(session_id)
        return await super().resume(session_id, runtime)

    async def listed(self) -> list[StoredSession]:
        stored = await super().listed()
        visible = set(self.gate.visible([s.session_id for s in stored]))
        return [s for s in stored if s.session_id in visible]

    def registered(self) -> list[str]:
        return self.gate.visible(super().registered())

    async def metadata(self, session_id: str) -> StoredSession | None:
        self.gate.admit(session_id)
        return await super().metadata(session_id)

    async def close(self, session: Any, session_id: str | None) -> None:
        await super().close(session, session_id)
        self.gate.closed(session_id, self.store.events_log(session_id))
