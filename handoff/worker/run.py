"""One step, done by one worker process with its own runtime.

The worker reports everything as JSON-lines events and never raises to its parent: an
action that fails is reported as an ``error`` event and the actions that needed its
result are reported as ``skipped``. The last line is always ``finished`` unless the
process was killed, which the coordinator then knows from the missing line.
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

from handoff.backends import Backend
from handoff.eventlog import EventLogSummary, events_path, parse_events, summarize, summarize_file
from handoff.fact import Fact
from handoff.guard.gate import LEASE_SECONDS, Gate, Refused
from handoff.registry import Registry
from handoff.stores.database import connect
from handoff.runtime_locator import locate_runtime
from handoff.witness.tags import TAG_HEADERS
from handoff.worker.spec import TURN_ACTIONS, WorkerSpec
from handoff.worker.store import WorkerStore

Emit = Callable[..., None]


class Step:
    def __init__(self, spec: WorkerSpec, emit: Emit):
        from handoff.worker.sdk import SDK_VERSION  # the SDK loads here

        self.spec = spec
        self.emit = emit
        for name in (spec.api_key_env, spec.token_env):  # only the variables the backend names
            if name and spec.secrets.get(name):
                os.environ[name] = spec.secrets[name]
        self.fact = Fact(spec.fact_value, spec.fact_topic)
        self.backend = Backend(spec.backend, spec.model, api_key_env=spec.api_key_env, token_env=spec.token_env)
        self.session: Any = None
        self.session_id = spec.session_id
        self.turn = spec.first_turn
        self.sdk_version = SDK_VERSION
        # An empty runtime path means "the one installed on this machine" (remote hosts).
        runtime_path = spec.runtime_path or str(locate_runtime())
        self.home = Path(spec.home).expanduser()
        self.hostname = socket.gethostname()
        self.runtime_version = ""
        # With a database store, session files go through a SessionFs provider to it.
        self.store = WorkerStore(spec.store, str(self.home)) if spec.store else None
        self.runtime_path = runtime_path
        self.runtime = self._new_runtime()
        # The registry records owners for raw and guarded steps alike; only a guarded
        # step checks them (and ids, receipts, leases) through the gate.
        self.registry = self.store.registry if self.store else (Registry(connect(spec.registry)) if spec.registry else None)
        if spec.guarded and self.registry is None:
            raise LookupError("a guarded step needs a registry (a database store or a registry file)")
        holder = f"{self.hostname}:{os.getpid()}"
        self.gate = Gate(self.registry, spec.owner, holder, spec.reuse) if spec.guarded else None
        self._lease_keeper: asyncio.Task | None = None

    def _new_runtime(self):
        from handoff.worker.sdk import Runtime

        # The provider is not stored with the session: every runtime is given it again,
        # unless the step is there to show what happens when it is not.
        source = None if self.spec.without_provider else self.backend.model_source(self.spec.witness_url, self.spec.tags)
        return Runtime(self.runtime_path, str(self.home), source, files=self.store.files if self.store else None)

    async def run(self) -> bool:
        started = time.monotonic()
        version = self.runtime_version = await self.runtime.start()
        self.emit(
            "ready",
            pid=os.getpid(),
            hostname=self.hostname,
            address=_address_towards(self.spec.witness_url),
            home=str(self.home),
            runtime_version=version,
            sdk_version=self.sdk_version,
            runtime_start_ms=_ms(started),
            store=_redacted(self.spec.store),
        )
        ok = True
        try:
            for action in self.spec.actions:
                ok = await self._do(action) and ok
        finally:
            await self.runtime.stop()
        self._report_event_log()
        if self.store:
            self.store.close()
        return ok

    async def _do(self, action: str) -> bool:
        needs_session = action in TURN_ACTIONS or action == "close"
        if needs_session and self.session is None:
            self.emit("skipped", action=action, reason="no open session")
            return False
        started = time.monotonic()
        try:
            detail = await getattr(self, "_" + action.replace("-", "_"))()
        except Refused as refusal:
            self.emit("error", action=action, message=_one_line(refusal), refused=True, ms=_ms(started))
            return False
        except Exception as error:  # the worker reports, it never raises to its parent
            message = self.backend.scrub(_one_line(error))
            explained = self.backend.explain(message)
            self.emit("error", action=action, message=f"{message} ({explained})" if explained else message, ms=_ms(started))
            return False
        if action not in TURN_ACTIONS:
            self.emit("action", action=action, session_id=self.session_id, ms=_ms(started), **(detail or {}))
        return True

    async def _create(self) -> dict | None:
        return await self._open_new(self.session_id)

    async def _create_without_id(self) -> dict | None:
        return await self._open_new(None)

    async def _open_new(self, session_id: str | None) -> dict | None:
        if self.gate and session_id is not None and self.gate.admit_create(session_id):
            await self._resume()  # --reuse: the old conversation continues, as the lab promises
            return {"reused": True}
        self.session = await self.runtime.create(session_id)
        self.session_id = self.runtime.session_id(self.session)
        if self.registry:
            self.registry.created(self.session_id, self.spec.owner, self.hostname, self.runtime_version)
        if self.gate:
            self.gate.take_lease(self.session_id)
            self._keep_lease()
        return None

    async def _resume(self) -> None:
        if self.gate:
            self.gate.admit_resume(self.session_id, self._log_text())
            self._keep_lease()
        self.session = await self.runtime.resume(self.session_id)
        if self.registry:
            self.registry.resumed(self.session_id, self.hostname, self.runtime_version)

    def _keep_lease(self) -> None:
        """Renew the lease while the session is open; a killed worker stops renewing, so
        its lease runs out and a later writer may take over."""

        async def renew() -> None:
            while True:
                await asyncio.sleep(LEASE_SECONDS / 3)
                self.gate.renew(self.session_id)

        self._lease_keeper = asyncio.create_task(renew())

    def _log_text(self) -> str | None:
        if self.store:
            return self.store.events_text(self.session_id)
        path = events_path(self.home, self.session_id)
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    async def _concurrent_resume_and_ask(self) -> dict:
        """While this worker's session is open, a second runtime resumes the same id and
        asks; then the first runtime takes another turn. Raw, both succeed and the log
        forks; guarded, the second writer is refused by the lease."""
        second_runtime = self._new_runtime()
        await second_runtime.start()
        try:
            if self.gate:
                Gate(self.registry, self.spec.owner, f"{self.hostname}:{os.getpid()}:second").admit_resume(
                    self.session_id, self._log_text())
            second = await second_runtime.resume(self.session_id)
            await self._turn("ask", self.fact.question_prompt, second)
            await self._turn("tell", self.fact.remember_prompt)
            await second_runtime.close(second)
        finally:
            await second_runtime.stop()
        return {"second_runtime": True}

    async def _discover(self) -> dict:
        """Find the session in the registry (not the runtime's index) and take its id."""
        if not self.store:
            raise LookupError("discover needs a database store with a registry")
        registered = self.store.registry.sessions()
        if not registered:
            raise LookupError("the registry lists no sessions")
        self.session_id = registered[0].session_id
        return {"registered": [s.session_id for s in registered]}

    async def _resume_most_recent(self) -> dict:
        stored = await self.runtime.list()
        if not stored:
            raise LookupError("list_sessions returned no sessions to resume")
        newest = max(stored, key=lambda s: s.modified)
        self.session_id = newest.session_id
        self.session = await self.runtime.resume(newest.session_id)
        return {"listed": [s.session_id for s in stored]}

    async def _tell(self) -> None:
        await self._turn("tell", self.fact.remember_prompt)

    async def _crash_mid_append(self) -> None:
        """Start a turn and wait to be killed inside the first append to the store,
        after the row was written and before the transaction commits."""
        if not self.store:
            raise LookupError("crash-mid-append needs a database store")

        async def hold(path: str) -> None:
            self.emit("holding", session_id=self.session_id, during=f"append to {path}")
            await asyncio.Event().wait()

        self.store.files(self.session_id).hold_before_commit = hold
        await self._turn("tell", self.fact.remember_prompt)

    async def _ask(self) -> None:
        await self._turn("ask", self.fact.question_prompt)

    async def _turn(self, kind: str, prompt: str, session: Any = None) -> None:
        started = time.monotonic()
        # The turn number tags the request for the witness or relay; the Copilot service gets no tags.
        tags = {TAG_HEADERS["turn"]: str(self.turn)} if self.backend.seen_on_the_wire else {}
        answer = await self.runtime.send(session or self.session, prompt, tags)
        if self.registry:
            self.registry.turned(self.session_id, prompt)
        self.emit("turn", turn=self.turn, kind=kind, session_id=self.session_id, prompt=prompt, answer=answer, ms=_ms(started))
        self.turn += 1

    async def _close(self) -> None:
        await self.runtime.close(self.session)
        self.session = None
        if self.gate:
            if self._lease_keeper:
                self._lease_keeper.cancel()
            self.gate.closed(self.session_id, self._log_text())

    async def _metadata(self) -> dict:
        if self.gate:
            self.gate.admit(self.session_id)
        found = await self.runtime.metadata(self.session_id)
        return {"found": found is not None, "summary": found.summary if found else None}

    async def _list(self) -> dict:
        listed = [s.session_id for s in await self.runtime.list()]
        return {"listed": self.gate.visible(listed) if self.gate else listed}

    async def _hold(self) -> None:
        self.emit("holding", session_id=self.session_id)
        await asyncio.Event().wait()  # until the coordinator kills this process

    def _event_log(self) -> EventLogSummary | None:
        if self.store:
            text = self.store.events_text(self.session_id)
            return None if text is None else summarize(*parse_events(text.splitlines()))
        return summarize_file(events_path(self.home, self.session_id))

    def _report_event_log(self) -> None:
        if not self.session_id:
            return
        summary = self._event_log()
        if summary is None:
            self.emit("eventlog", session_id=self.session_id, found=False)
            return
        last = summary.last_resume
        self.emit(
            "eventlog",
            session_id=self.session_id,
            found=True,
            events=summary.events,
            starts=summary.starts,
            resumes=len(summary.resumes),
            closed_before_resume=last.closed_before if last else None,
            resume_event_count=last.event_count if last else None,
            already_in_use=last.already_in_use if last else None,
            branch_points=summary.branch_points,
            unreadable_lines=summary.unreadable_lines,
        )


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


def _redacted(url: str | None) -> str | None:
    """A store's address without any password in it."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def _ms(since: float) -> int:
    return round((time.monotonic() - since) * 1000)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:400]
