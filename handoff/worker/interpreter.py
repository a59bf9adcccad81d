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
from functools import partial
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

import psutil

from handoff.eventlog import report
from handoff.fact import Fact
from handoff.guard.gate import Refused
from handoff.protocol import (
    ActionDone,
    ActionFailed,
    Holding,
    Ready,
    Skipped,
    Hold,
    Turn,
    WorkerSpec,
)
from handoff.runtime_locator import locate_runtime
from handoff.stores.database import redacted
from handoff.witness.tags import TAG_HEADERS, filler_turn
from handoff.worker.model import model_source, second_model
from handoff.worker.sdk import SDK_VERSION, Runtime
from handoff.worker.sessions import GuardedSessions, Sessions
from handoff.worker.store import DatabaseStore, HomeStore, StoreCost, open_store
from handoff.worker.tools import app_tools, session_options
from handoff.words import TURN_ACTIONS, Action, AppTool, FaultPoint, TurnKind, WorkerStage

Emit = Callable[[Any], None]
RUNTIME_STOP_SECONDS = 10.0  # stopping a runtime that died may never answer


class StoreCosts:
    """What each filler turn cost a database store: the bytes its files were given in the
    turn and the bytes the database paid for them. A count that fails (the store out of
    reach) ends the counting; the turns go on."""

    def __init__(self, store: HomeStore | DatabaseStore):
        self.store = store
        self.given: list[int] = []
        self.written: list[int] = []
        self.last = self._read()
        self.written_is = self.last.written_is if self.last else None

    def _read(self) -> StoreCost | None:
        try:
            return self.store.cost()
        except Exception:  # measuring must never fail the turns it measures
            return None

    def turn_ended(self) -> None:
        if self.last is None:
            return
        now = self._read()
        if now is None:
            self.last = None
            self.given.clear()  # a count with a gap would mislead
            self.written.clear()
            return
        self.given.append(now.given - self.last.given)
        self.written.append(now.written - self.last.written)
        self.last = now

    def reported(self) -> dict:
        if not self.given:
            return {}
        return {"store_given": tuple(self.given), "store_written": tuple(self.written),
                "store_written_is": self.written_is}


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
        self.holds = Holds(emit)
        # An empty runtime path means "the one installed on this machine" (remote hosts).
        self.runtime_path = spec.runtime_path or str(locate_runtime())
        self.home = Path(spec.home).expanduser()
        hostname = socket.gethostname()
        # With a database store, session files go through a SessionFs provider to it.
        self.store = open_store(spec.store, spec.registry, self.home)
        self.runtime = self._new_runtime()
        if spec.guarded:
            self.sessions = GuardedSessions(self.runtime, self.store, spec.owner, hostname, f"{hostname}:{os.getpid()}",
                                            spec.reuse, bytes.fromhex(spec.app_key), spec.known_good,
                                            spec.lease_clock)
        else:
            self.sessions = Sessions(self.runtime, self.store, spec.owner, hostname)

    def _new_runtime(self) -> Runtime:
        # The provider is not stored with the session: every runtime is given it again,
        # unless the step is there to show what happens when it is not.
        source = model_source(self.backend, self.spec.witness_url, self.spec.tags, token=self.spec.witness_token or None,
                              without_provider=self.spec.without_provider)
        return Runtime(self.runtime_path, str(self.home), source, files=self.store.files,
                       tools=app_tools(self.spec.tools, self.fact, self.spec.settings, self._hold_inside_tool),
                       options=session_options(self.spec.settings, (source.model or None) if source else None, self.home,
                                               self._hold_inside_permission, partial(second_model, self.backend)))

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
                self.emit(ActionFailed(t=time.time(), action=WorkerStage.START, message=substituted))
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
            await asyncio.wait_for(self.runtime.stop(), RUNTIME_STOP_SECONDS)
        except (asyncio.TimeoutError, TimeoutError):  # a runtime that died may never answer
            self.emit(ActionFailed(t=time.time(), action=WorkerStage.STOP, ms=_ms(started),
                                   message=f"the runtime did not stop within {RUNTIME_STOP_SECONDS:.0f} s"))
            return False
        except Exception as error:
            self.emit(ActionFailed(t=time.time(), action=WorkerStage.STOP, message=self.backend.scrub(_one_line(error)),
                                   ms=_ms(started)))
            return False
        return True

    async def _do(self, action: str) -> bool:
        needs_session = action in TURN_ACTIONS or action in (Action.CLOSE, Action.COMPACT, Action.FILL)
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
            turn = self.turns if action in TURN_ACTIONS else None  # the failed turn, as numbered in _turn
            gave_up = self.spec.turn_timeout if turn is not None and isinstance(error, TimeoutError) else None
            self.emit(ActionFailed(t=time.time(), action=action, message=message, ms=_ms(started), turn=turn,
                                   timeout_s=gave_up))
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

    async def _compact(self) -> dict:
        """The runtime asks the model for a summary and replaces the history with it; the
        event reports the summary (the protocol's ``summary``, as metadata's is)."""
        _, summary = await self.runtime.compact(self.session)
        return {"summary": summary}

    async def _concurrent_resume_and_ask(self) -> None:
        """While this worker's session is open, a second runtime resumes the same id and
        asks; then the first runtime takes another turn. Raw, both succeed and the log
        forks; guarded, the second writer is refused by the lease."""
        second_runtime = self._new_runtime()
        await second_runtime.start()
        try:
            second = await self.sessions.resume(self.session_id, second_runtime)
            await self._turn(TurnKind.ASK, self.fact.question_prompt, second)
            await self._turn(TurnKind.TELL, self.fact.remember_prompt)
            await second_runtime.close(second)
        finally:
            await second_runtime.stop()

    # -- turns, and the points where the coordinator injects faults ------------------------

    async def _tell(self) -> None:
        await self._turn(TurnKind.TELL, self.fact.remember_prompt)

    async def _look_up(self) -> None:
        """A tell whose fact comes back from the app's lookup tool, not in the prompt. The
        prompt names the tool whether this worker registered it or not: a model may call a
        tool the session no longer has, and what the runtime does then is measured."""
        await self._turn(TurnKind.TELL, self.fact.lookup_prompt(AppTool.LOOKUP_FAVOURITE))

    async def _fill(self) -> dict:
        """A long history: the step's filler turns, one after another in this process (a
        worker per turn would measure process starts, not the history). They are not the
        step's judged turns: each request is tagged as filler (``fill-N``), so the witness
        still records what it carried (whether the fact told before them was still sent)."""
        costs = StoreCosts(self.store)
        for number in range(1, self.spec.filler_turns + 1):
            tags = {TAG_HEADERS["turn"]: filler_turn(number)} if self.backend.seen_on_the_wire else {}
            await self.runtime.send(self.session, self.fact.filler_prompt(number), tags, self.spec.turn_timeout)
            costs.turn_ended()
        return {"turns": self.spec.filler_turns, **costs.reported()}

    async def _ask(self) -> None:
        await self._turn(TurnKind.ASK, self.fact.question_prompt)

    async def _turn(self, kind: TurnKind, prompt: str, session: Any = None) -> None:
        started = time.monotonic()
        self.turns += 1
        self._hold_inside_write(self.turns)
        # The turn tags the request for the witness or relay; the Copilot service gets no tags.
        tags = {TAG_HEADERS["turn"]: str(self.turns)} if self.backend.seen_on_the_wire else {}
        answer = await self.runtime.send(session or self.session, prompt, tags, self.spec.turn_timeout)
        if self.store.registry:
            self.store.registry.turned(self.session_id, prompt)
        self.emit(Turn(t=time.time(), turn=self.turns, kind=kind, session_id=self.session_id, prompt=prompt,
                       answer=answer, ms=_ms(started)))
        if Hold(FaultPoint.AFTER_TURN, self.turns) in self.spec.holds:
            await self.holds.wait(FaultPoint.AFTER_TURN, self.turns, self.session_id)

    def _hold_inside_write(self, turn: int) -> None:
        """With a hold inside this turn's write, the store's first append of the turn
        stops after writing its row and before committing, until the coordinator acts."""
        if Hold(FaultPoint.INSIDE_WRITE, turn) not in self.spec.holds:
            return
        if not isinstance(self.store, DatabaseStore):
            raise LookupError("a hold inside a write needs a database store")
        files = self.store.files(self.session_id)

        async def hold(path: str) -> None:
            files.hold_before_commit = None  # once: the turn's first append
            await self.holds.wait(FaultPoint.INSIDE_WRITE, turn, self.session_id, during=f"append to {path}")

        files.hold_before_commit = hold

    async def _hold_inside_tool(self) -> None:
        """Called as the app's tool starts answering: with a hold inside this turn's tool
        call, say ``holding`` there and wait (the coordinator kills the worker here, while
        the runtime waits for the tool's result)."""
        if Hold(FaultPoint.INSIDE_TOOL, self.turns) in self.spec.holds:
            await self.holds.wait(FaultPoint.INSIDE_TOOL, self.turns, self.session_id, during="the app's tool call")

    async def _hold_inside_permission(self) -> None:
        """Called as the runtime asks the app's permission handler about a tool call: with a
        hold there for this turn, say ``holding`` and wait (the coordinator kills the worker
        here, with the permission request pending)."""
        if Hold(FaultPoint.INSIDE_PERMISSION, self.turns) in self.spec.holds:
            await self.holds.wait(FaultPoint.INSIDE_PERMISSION, self.turns, self.session_id,
                                  during="the app's permission handler")

    async def _hold(self) -> None:
        await self.holds.wait(FaultPoint.HOLD, self.turns, self.session_id)

    async def _restart_runtime(self) -> None:
        """An app whose runtime died starts a new one; its open session died with it."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.runtime.stop(), RUNTIME_STOP_SECONDS)
        self.session = None
        self.runtime = self.sessions.runtime = self._new_runtime()
        await self.runtime.start()


class Holds:
    """Stopping at the coordinator's fault points: say ``holding`` on stdout, then wait for
    the release line on stdin. EOF (the coordinator is done with this worker) releases too."""

    def __init__(self, emit: Emit):
        self.emit = emit
        self._lines: asyncio.StreamReader | None = None

    async def wait(self, point: str, turn: int, session_id: str | None, during: str | None = None) -> None:
        if self._lines is None:
            loop = asyncio.get_running_loop()
            self._lines = asyncio.StreamReader()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(self._lines), os.fdopen(0, "rb", 0))
        self.emit(Holding(t=time.time(), session_id=session_id, point=point, turn=turn, during=during))
        await self._lines.readline()


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
