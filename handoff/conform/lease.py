"""Two resumers under the guard's lease: the writer that lost the lease writes nothing.

A session created, told and closed through the provider is resumed by a first writer,
which holds the guard's lease (handoff/guard/gate.py) and has the session open. Its lease
then runs out unrenewed, as a paused holder's does (the suite keeps the lease clock, and
moves it), and a second writer, on a home of its own, takes the lease, resumes, asks and
closes. The first, superseded but still holding the session open, asks: the log read back
through the provider must be exactly what the second's close left. Every writer reaches
the provider through the guard's fence (handoff/guard/fence.py), as an app on the guarded
path does; the row says whether the superseded writer's turn came back to it as an error
or as an answer whose turn was not kept.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

from handoff.conform.contract import adapter_error
from handoff.conform.persistence import provider, tell, workspace
from handoff.fact import Fact
from handoff.guard.fence import Fence
from handoff.guard.gate import LEASE_SECONDS
from handoff.hosts.local import ready_runtime
from handoff.stores.database import connect
from handoff.stores.registry import Registry
from handoff.stores.files import STATE_ROOT
from handoff.worker.sdk import Fenced, Runtime, session_fs_handler

LOG = f"{STATE_ROOT}/events.jsonl"


@dataclass(frozen=True)
class Superseded:
    """What the log held when the second writer closed, and after the superseded first
    asked and closed; and what the first was told."""
    kept_by_second: bool  # the second's turn reached the log
    changed_after: bool  # the superseded writer's ask or close changed the log
    first_told: str  # what the superseded writer's ask got: an answer, or in whose words it failed
    problem: str | None = None
    unsure: bool = False


def superseded(factory: Callable[[Any], Any], fact: Fact) -> Superseded:
    with workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        problem = asyncio.run(tell(factory, session_id, witness.url, "tell", fact, folder / "home-a"))
        if problem:
            return Superseded(False, False, "", problem)
        registry = Registry(connect(f"sqlite:///{folder / 'registry.db'}"))
        return asyncio.run(_after_the_lease_moved(factory, registry, session_id, witness.url, fact, folder))


async def _after_the_lease_moved(factory: Callable[[Any], Any], registry: Registry, session_id: str,
                                 witness_url: str, fact: Fact, folder: Path) -> Superseded:
    now = 0.0  # the lease's time, moved by the suite and by nothing else

    def fenced(holder: str) -> Callable[[Any], Any]:
        return lambda session: Fenced(factory(session), Fence(registry, session.session_id, holder))

    first, second = (Runtime(str(ready_runtime()), str(folder / home), provider(witness_url, holder, fact),
                             fs_factory=fenced(holder)) for home, holder in (("home-b", "first"), ("home-c", "second")))
    try:
        await first.start()
        await second.start()
        if not registry.take_lease(session_id, "first", LEASE_SECONDS, now):
            return Superseded(False, False, "", "the first writer could not take the lease", unsure=True)
        opened = await first.resume(session_id)
        told = await _log(factory, session_id)
        now += LEASE_SECONDS * 2  # the first's lease has run out, unrenewed: it is paused, as far as anyone knows
        if not registry.take_lease(session_id, "second", LEASE_SECONDS, now):
            return Superseded(False, False, "", "the second writer could not take the run-out lease", unsure=True)
        other = await second.resume(session_id)
        await second.send(other, fact.question_prompt, {})
        await second.close(other)
        registry.release_lease(session_id, "second")
        closed = await _log(factory, session_id)
        try:
            answer = await first.send(opened, fact.question_prompt, {})
            first_told = "an answer" if answer else "no answer"
        except Exception as error:  # what the runtime made of the refused writes: the row shows it
            first_told = f"{type(error).__name__}: {error}"
        try:
            await first.close(opened)
        except Exception:  # its close is refused too: nothing it says changes the verdict
            pass
        after = await _log(factory, session_id)
    except Exception as error:
        return Superseded(False, False, "", f"resuming and asking failed: {type(error).__name__}: {error}")
    finally:
        await first.stop()
        await second.stop()
    return Superseded(closed != told, after != closed, first_told)


async def _log(factory: Callable[[Any], Any], session_id: str) -> str:
    """The SHA-256 of the session's event log, read through a provider of its own."""
    handler = session_fs_handler(factory(SimpleNamespace(session_id=session_id)))
    read = await handler.read_file(SimpleNamespace(path=LOG))
    if adapter_error(read) is not None:
        raise LookupError(f"the log could not be read back: {adapter_error(read).message}")
    return hashlib.sha256(read.content.encode()).hexdigest()
