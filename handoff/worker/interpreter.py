"""One step, done by one worker process with its own runtime: the spec's actions, in order.

The worker reports everything as protocol events (handoff/protocol.py) and never raises
to its parent: an action that fails is reported as an ``error`` event and the actions
that needed its result are reported as ``skipped``. The last line is always ``finished``
unless the process was killed, which the coordinator then knows from the missing line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

import psutil

from handoff.eventlog import report
from handoff.fact import Fact
from handoff.guard.gate import Refused
from handoff.protocol import (
    AFTER_TURN,
    INSIDE_WRITE,
    TURN_ACTIONS,
    ActionDone,
    ActionFailed,
    Holding,
    Ready,
    Skipped,
    Turn,
    WorkerSpec,
)
from handoff.runtime_locator import locate_runtime
from handoff.stores.database import redacted
from handoff.witness.tags import TAG_HEADERS
from handoff.worker.model import model_source
from handoff.worker.sdk import SDK_VERSION, Runtime
from handoff.worker.sessions import GuardedSessions, Sessions
from handoff.worker.store import DatabaseStore, open_store

Emit = Callable[[Any], None]


class Interpreter:
    """Does a spec's actions in order with one runtime (two for a concurrent resume), and
    reports each as an event."""

    def __init__(self, spec: WorkerSpec, emit: Emit):
        self.spec = spec
        self.emit = emit
        for name, value in spec.secrets.items():  # only the variables the backend names
            if name in (spec.backend.api_key_env, spec.backend.token_env) and value:
                os.environ[name] = value
        self.fact = Fact(spec.fact_value, spec.fact_topic)
        self.backend = spec.backend
        self.session: Any = None
        self.session_id = spec.session_id
        self.turns = 0  # turns taken so far in this step
        # An empty runtime path means "the one installed on this machine" (remote hosts).
        self.runtime_path = spec.runtime_path or str(locate_runtime())
        self.home = Path(spec.home).expanduser()
        hostname = socket.gethostname()
        # With a database store, session files go through a SessionFs provider to it.
        self.store = open_store(spec.store, spec.registry, self.home)
        self.runtime = self._new_runtime()
        if spec.guarded:
            self.sessions = GuardedSessions(self.runtime, self.store, spec.owner, hostname, f"{hostname}:{os.getpid()}",
                                            spec.reuse, bytes.fromhex(spec.app_key), spec.known_good)
        else:
            self.sessions = Sessions(self.runtime, self.store, spec.owner, hostname)

    def _new_runtime(self) -> Runtime:
        # The provider is not stored with the session: every runtime is given it again,
        # unless the step is there to show what happens when it is not.
        source = None if self.spec.without_provider else model_source(self.backend, self.spec.witness_url, self.spec.tags)
        return Runtime(self.runtime_path, str(self.home), source, files=self.store.files)

    async def run(self) -> bool:
        started = time.monotonic()
        version = self.sessions.runtime_version = await self.runtime.start()
        self.emit(Ready(
            t=time.time(), pid=os.getpid(), hostname=self.sessions.hostname,
            address=_address_towards(self.spec.witness_url), home=str(self.home), runtime_version=version,
            sdk_version=SDK_VERSION, runtime_start_ms=_ms(started), store=redacted(self.spec.store),
        ))
        ok = True
        try:
            substituted = self._substituted(version)
            if substituted:
                ok = False
                self.emit(ActionFailed(t=time.time(), action="start", message=substituted))
                for action in self.spec.actions:
                    self.emit(Skipped(t=time.time(), action=action, reason="not the runtime or SDK the step asks for"))
            else:
                for action in self.spec.actions:
                    ok = await self._do(action) and ok
        finally:
            ok = await self._stop() and ok
        if self.session_id:
            self.emit(report(self.session_id, self.store.events_log(self.session_id)))
        self.store.close()
        return ok

    def _substituted(self, runtime_version: str) -> str | None:
        """What is not the version the step asks for: a step that names a version measures
        that version or nothing."""
        wrong = []
        if self.spec.runtime_version and runtime_version != self.spec.runtime_version:
            wrong.append(f"asked for runtime {self.spec.runtime_version}, the runtime reports {runtime_version}")
        if self.spec.sdk_version and SDK_VERSION != self.spec.sdk_version:
            wrong.append(f"asked for SDK {self.spec.sdk_version}, this worker runs SDK {SDK_VERSION}")
        return "; ".join(wrong) or None

    async def _stop(self) -> bool:
        """Stop the runtime. An old runtime lacks the calls the SDK makes to stop it (1.0.40
        has no session.detach or runtime.shutdown): that is reported, and the worker still
        reads the session's log."""
        started = time.monotonic()
        try:
            await self.runtime.stop()
        except Exception as error:
            self.emit(ActionFailed(t=time.time(), action="stop", message=self.backend.scrub(_one_line(error)),
                                   ms=_ms(started)))
            return False
        return True

    async def _do(self, action: str) -> bool:
        needs_session = action in TURN_ACTIONS or action == "close"
        if needs_session and self.session is None:
            self.emit(Skipped(t=time.time(), action=action, reason="no open session"))
            return False
        started = time.monotonic()
        try:
            detail = await getattr(self, "_" + action.replace("-", "_"))()
        except Refused as refusal:
            self.emit(ActionFailed(t=time.time(), action=action, message=_one_line(refusal), refused=True, ms=_ms(started)))
            return False
        except Exception as error:  # the worker reports, it never raises to its parent
            message = self.backend.scrub(_one_line(error))
            self.emit(ActionFailed(t=time.time(), action=action, message=message, ms=_ms(started)))
            return False
        if action not in TURN_ACTIONS:
            self.emit(ActionDone(t=time.time(), action=action, session_id=self.session_id, ms=_ms(started),
                                 **(detail or {})))
        return True

    # -- opening, finding and closing sessions (through self.sessions) -------------------

    async def _mint(self) -> None:
        self.session_id = self.sessions.mint(None)

    async def _mint_for_key(self) -> None:
        self.session_id = self.sessions.mint(self.session_id)

    async def _create(self) -> dict | None:
        self.session, self.session_id, reused = await self.sessions.create(self.session_id)
        return {"reused": True} if reused else None

    async def _create_without_id(self) -> None:
        self.session, self.session_id, _ = await self.sessions.create(None)

    async def _resume(self) -> None:
        self.session = await self.sessions.resume(self.session_id)

    async def _resume_most_recent(self) -> dict:
        stored = await self.sessions.listed()
        if not stored:
            raise LookupError("list_sessions returned no sessions to resume")
        self.session_id = max(stored, key=lambda s: s.modified).session_id
        self.session = await self.sessions.resume(self.session_id)
        return {"listed": tuple(s.session_id for s in stored)}

    async def _discover(self) -> dict:
        """Find the session in the registry (not the runtime's index) and take its id."""
        registered = self.sessions.registered()
        if not registered:
            raise LookupError("the registry lists no sessions")
        self.session_id = registered[0]
        return {"registered": tuple(registered)}

    async def _metadata(self) -> dict:
        found = await self.sessions.metadata(self.session_id)
        return {"found": found is not None, "summary": found.summary if found else None}

    async def _list(self) -> dict:
        return {"listed": tuple(s.session_id for s in await self.sessions.listed())}

    async def _close(self) -> None:
        session, self.session = self.session, None
        await self.sessions.close(session, self.session_id)

    async def _concurrent_resume_and_ask(self) -> None:
        """While this worker's session is open, a second runtime resumes the same id and
        asks; then the first runtime takes another turn. Raw, both succeed and the log
        forks; guarded, the second writer is refused by the lease."""
        second_runtime = self._new_runtime()
        await second_runtime.start()
        try:
            second = await self.sessions.resume(self.session_id, second_runtime)
            await self._turn("ask", self.fact.question_prompt, second)
            await self._turn("tell", self.fact.remember_prompt)
            await second_runtime.close(second)
        finally:
            await second_runtime.stop()

    # -- turns, and the points where the coordinator injects faults ------------------------

    async def _tell(self) -> None:
        await self._turn("tell", self.fact.remember_prompt)

    async def _ask(self) -> None:
        await self._turn("ask", self.fact.question_prompt)

    async def _turn(self, kind: str, prompt: str, session: Any = None) -> None:
        started = time.monotonic()
        self.turns += 1
        # The turn tags the request for the witness or relay; the Copilot service gets no tags.
        tags = {TAG_HEADERS["turn"]: str(self.turns)} if self.backend.seen_on_the_wire else {}
        answer = await self.runtime.send(session or self.session, prompt, tags, self.spec.turn_timeout)
        if self.store.registry:
            self.store.registry.turned(self.session_id, prompt)
        self.emit(Turn(t=time.time(), turn=self.turns, kind=kind, session_id=self.session_id, prompt=prompt,
                       answer=answer, ms=_ms(started)))

    async def _crash_mid_append(self) -> None:
        """Start a turn and wait to be killed inside the first append to the store,
        after the row was written and before the transaction commits."""
        if not isinstance(self.store, DatabaseStore):
            raise LookupError("crash-mid-append needs a database store")

        async def hold(path: str) -> None:
            self.emit(Holding(t=time.time(), session_id=self.session_id, point=INSIDE_WRITE, during=f"append to {path}"))
            await asyncio.Event().wait()

        self.store.files(self.session_id).hold_before_commit = hold
        await self._turn("tell", self.fact.remember_prompt)

    async def _hold(self) -> None:
        self.emit(Holding(t=time.time(), session_id=self.session_id, point=AFTER_TURN))
        await asyncio.Event().wait()  # until the coordinator kills this process


def _address_towards(url: str) -> str | None:
    """This machine's address on the route to ``url`` (no packet is sent); when that is
    loopback (a port forwarded over SSH), its first other IPv4 address."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((urlsplit(url).hostname, urlsplit(url).port or 80))
        address = probe.getsockname()[0]
        if not address.startswith("127."):
            return address
    for addresses in psutil.net_if_addrs().values():
        for entry in addresses:
            if entry.family == socket.AF_INET and not entry.address.startswith("127."):
                return entry.address
    return None


def _ms(since: float) -> int:
    return round((time.monotonic() - since) * 1000)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, BaseExceptionGroup):  # say what went wrong, not only how many things did
        text = f"{error.message}: " + "; ".join(_one_line(inner) for inner in error.exceptions)
    return text[:400]
