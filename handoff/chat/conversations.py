"""The chat server's side of a conversation: every call by session id, behind the guard.

The browser hands the server nothing but a session id; the server's answer to each call
starts with the guard (handoff/guard/gate.py): the id was minted for the logged-in user
and the registry says they own it, or the call is refused before the runtime hears of it.
A turn then does what the lab's step 5 describes: ``resume_session(id)``, send, close;
the close leaves the guard's receipt, and the lease held meanwhile keeps a second writer
(another device, another server on the same store) out until it is done. A user's calls
on one server wait for each other, so two devices of one user never fork a log.

The history a page shows is read from the store (the session's event log), never from
anything the browser kept.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Callable

from handoff.eventlog import messages, parse_events
from handoff.guard.gate import DENIED, Refused
from handoff.worker.sdk import Runtime
from handoff.worker.sessions import GuardedSessions
from handoff.worker.store import DatabaseStore, HomeStore

TURN_SECONDS = 60.0
Headers = Callable[[], dict[str, str]]


@dataclass(frozen=True)
class Listed:
    session_id: str
    summary: str | None  # the first prompt, as the runtime's own index has it; None before one
    last_active: float
    turns: int


@dataclass
class UserRuntime:
    """One user's runtime (their token is the client's) and its guarded path."""

    runtime: Runtime
    sessions: GuardedSessions
    lock: asyncio.Lock


def guarded_sessions(runtime: Runtime, version: str, store: HomeStore | DatabaseStore, key: bytes, user: str,
                     server: str) -> GuardedSessions:
    """A user's guarded path on this server: ``server`` names it among those sharing the
    store (its lease holder's prefix)."""
    sessions = GuardedSessions(runtime, store, owner=user, hostname=socket.gethostname(),
                               holder=f"{server}:{user}", reuse=False, app_key=key)
    sessions.runtime_version = version
    return sessions


class Conversations:
    def __init__(self, store: HomeStore | DatabaseStore, users: dict[str, tuple[Runtime, GuardedSessions]],
                 model: str, turn_headers: Headers = dict, turn_timeout: float = TURN_SECONDS):
        """``users``: each user's started runtime and guarded path. ``turn_headers``: what
        goes with the next turn's requests (a rung's worker tags them for the witness)."""
        self.model = model
        self._store = store
        self._users = {user: UserRuntime(runtime, sessions, asyncio.Lock()) for user, (runtime, sessions) in users.items()}
        self._turn_headers = turn_headers
        self._turn_timeout = turn_timeout

    def _of(self, user: str) -> UserRuntime:
        return self._users[user]

    def listed(self, user: str) -> list[Listed]:
        """The user's own sessions, most recently active first (the registry's order)."""
        gate = self._of(user).sessions.gate
        found = self._store.registry.sessions(owner=user)
        mine = set(gate.visible([s.session_id for s in found]))
        return [Listed(s.session_id, s.summary, s.last_active, s.turns or 0) for s in found if s.session_id in mine]

    def new(self, user: str) -> str:
        """An id minted for the user. The runtime keeps nothing of a session before its
        first message, so the first turn creates it, under this id, and later turns
        resume it."""
        return self._of(user).sessions.mint(None)

    def _unused(self, user: str, session_id: str) -> bool:
        """An id minted for the user that no session has yet (a new chat)."""
        guarded = self._of(user).sessions
        return guarded.minter.minted_for_me(session_id) and self._store.registry.owner_of(session_id) is None

    def history(self, user: str, session_id: str) -> list[tuple[str, str]]:
        """The conversation as the store has it, for its owner only (Refused otherwise)."""
        if self._unused(user, session_id):
            return []
        self._of(user).sessions.gate.admit(session_id)
        log = self._store.events_log(session_id)
        return messages(parse_events(log)[0]) if log else []

    async def turn(self, user: str, session_id: str, text: str) -> str | None:
        """Resume by id (create, on a new chat's first turn), send ``text``, close: the
        answer (None when the model gave no text). Refused before the runtime hears of
        it when the id is not the user's."""
        mine = self._of(user)
        async with mine.lock:
            guarded = mine.sessions
            if self._unused(user, session_id):
                session, session_id, _ = await guarded.create(session_id)
            else:
                guarded.gate.admit(session_id)  # before anything is read: a stranger's id costs nothing
                session = await guarded.resume(session_id)
            try:
                self._store.registry.turned(session_id, text)
                return await mine.runtime.send(session, text, self._turn_headers(), timeout=self._turn_timeout)
            finally:
                await guarded.close(session, session_id)


def refusal_status(refused: Refused) -> int:
    """403 for someone else's (or no) session; 409 for one that is theirs but cannot be
    opened now (another writer's lease, a log changed since its last close)."""
    return 403 if str(refused) == DENIED else 409
