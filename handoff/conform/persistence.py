"""Persistence through a SessionFs provider, with the real runtime: a session created,
told the fact and closed through the provider, then resumed and asked — in the same
process, and in a new process with a home of its own, so that the provider is the only
thing the two share; the same after the session was compacted (its history replaced by
the model's summary, the files rewritten); and whether a runtime with a home of its own
finds the session at all (discovery). Each answer is judged as a run's are: it names the
fact, and the witness model saw the fact in what it was sent.

The new process imports the provider itself, by its ``MODULE:FACTORY`` (as another
server of the app would): ``python -m handoff.conform.resume``. It prints its answer as
one JSON line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from handoff.fact import Fact
from handoff.hosts.local import ready_runtime
from handoff.processes import descendant_pids, kill_descendants_since
from handoff.protocol import WITNESS_MODEL
from handoff.witness.evidence import read_evidence
from handoff.witness.server import make_server
from handoff.witness.tags import request_tags
from handoff.worker.sdk import Provider, Runtime

SCENARIO = "conform"
PROCESS_SECONDS = 120.0  # a new process that takes longer is unknown: it hangs


@dataclass(frozen=True)
class Found:
    """What a runtime with a home of its own, on the same provider, finds of a session."""
    listed: bool  # list_sessions lists it
    metadata: bool  # get_session_metadata returns something for it
    problem: str | None = None


@dataclass(frozen=True)
class Heard:
    """What one question got: its answer, and whether the model was sent the fact."""
    answer: str | None
    fact_sent: bool | None
    problem: str | None = None  # what failed instead (an SDK call, the new process)
    unsure: bool = False  # the problem is the suite's (no way to start a new process, a hang), not the provider's


class Witness:
    """The witness model in a thread of this process, recording to a file of its own."""

    def __init__(self, folder: Path):
        self.evidence = folder / "evidence.jsonl"
        self.server = make_server("127.0.0.1", 0, self.evidence)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Witness:
        self.thread.start()
        return self

    def __exit__(self, *_) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fact_sent(self, step: str) -> bool | None:
        """Whether the last request the step sent carried the fact (None: none came)."""
        seen = [evidence for evidence in read_evidence(self.evidence) if evidence.step == step]
        return seen[-1].fact_sent if seen else None


def provider(witness_url: str, step: str, fact: Fact) -> Provider:
    return Provider(f"{witness_url}/v1", WITNESS_MODEL, request_tags(SCENARIO, step, "local", fact))


async def tell(factory: Callable[[Any], Any], session_id: str, witness_url: str, step: str, fact: Fact,
               home: Path, compacted: bool = False) -> str | None:
    """Create the session through the provider, tell the fact (and compact the history,
    ``compacted``), close: what failed, if anything."""
    runtime = Runtime(str(ready_runtime()), str(home), provider(witness_url, step, fact), fs_factory=factory)
    doing = "creating and telling"
    try:
        await runtime.start()
        session = await runtime.create(session_id)
        await runtime.send(session, fact.remember_prompt, {})
        if compacted:
            doing = "compacting"
            await runtime.compact(session)
        await runtime.close(session)
    except Exception as error:  # the user's provider answers through the runtime: anything may come back
        return f"{doing} failed: {type(error).__name__}: {error}"
    finally:
        await runtime.stop()
    return None


async def ask(factory: Callable[[Any], Any], session_id: str, witness_url: str, step: str, fact: Fact,
              home: Path) -> tuple[str | None, str | None]:
    """Resume the session through the provider and ask: (the answer, what failed)."""
    runtime = Runtime(str(ready_runtime()), str(home), provider(witness_url, step, fact), fs_factory=factory)
    try:
        await runtime.start()
        session = await runtime.resume(session_id)
        answer = await runtime.send(session, fact.question_prompt, {})
        await runtime.close(session)
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"
    finally:
        await runtime.stop()
    return answer, None


def same_process(factory: Callable[[Any], Any], fact: Fact) -> Heard:
    """Created, told, closed, then resumed and asked in this process, on one home."""
    with _workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        home = folder / "home"
        problem = asyncio.run(tell(factory, session_id, witness.url, "tell", fact, home))
        if problem:
            return Heard(None, None, problem)
        answer, problem = asyncio.run(ask(factory, session_id, witness.url, "same-process", fact, home))
        return Heard(answer, witness.fact_sent("same-process"), problem and f"resuming and asking failed: {problem}")


def new_process(factory: Callable[[Any], Any], spec: str | None, fact: Fact, compacted: bool = False) -> Heard:
    """Created, told (and compacted) and closed here; resumed and asked by a new process
    with a home of its own, which imports the provider by ``spec``."""
    if spec is None:
        return Heard(None, None, "a new process imports the provider by its MODULE:FACTORY, and none was given",
                     unsure=True)
    with _workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        problem = asyncio.run(tell(factory, session_id, witness.url, "tell", fact, folder / "home-a", compacted))
        if problem:
            return Heard(None, None, problem)
        try:
            said, problem = asyncio.run(_resumed_elsewhere(spec, session_id, witness.url, fact, folder / "home-b"))
        except TimeoutError as hung:
            return Heard(None, None, str(hung), unsure=True)
        return Heard(said, witness.fact_sent("new-process"), problem)


def discovery(factory: Callable[[Any], Any], fact: Fact) -> Found:
    """Created, told and closed here; then a runtime with a home of its own, on the same
    provider, lists the sessions and asks for this one's metadata."""
    with _workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        problem = asyncio.run(tell(factory, session_id, witness.url, "tell", fact, folder / "home-a"))
        if problem:
            return Found(False, False, problem)
        return asyncio.run(_found(factory, session_id, witness.url, fact, folder / "home-b"))


async def _found(factory: Callable[[Any], Any], session_id: str, witness_url: str, fact: Fact, home: Path) -> Found:
    runtime = Runtime(str(ready_runtime()), str(home), provider(witness_url, "discovery", fact), fs_factory=factory)
    try:
        await runtime.start()
        listed = [stored.session_id for stored in await runtime.list()]
        metadata = await runtime.metadata(session_id)
    except Exception as error:
        return Found(False, False, f"listing or reading metadata failed: {type(error).__name__}: {error}")
    finally:
        await runtime.stop()
    return Found(session_id in listed, metadata is not None)


async def _resumed_elsewhere(spec: str, session_id: str, witness_url: str, fact: Fact,
                             home: Path) -> tuple[str | None, str | None]:
    arguments = [spec, session_id, witness_url, fact.value, fact.topic, str(home)]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "handoff.conform.resume", *arguments, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": _python_path()})
    try:
        out, err = await asyncio.wait_for(process.communicate(), PROCESS_SECONDS)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise TimeoutError(f"the new process did not finish within {PROCESS_SECONDS:.0f} s") from None
    lines = out.decode(errors="replace").strip().splitlines()
    if process.returncode != 0 or not lines:
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        return None, f"the new process failed (exit {process.returncode}): {last}"
    said = json.loads(lines[-1])
    return said.get("answer"), said.get("problem") and (f"a new process, with a home of its own, could not resume "
                                                        f"it through the provider: {said['problem']}")


def _python_path() -> str:
    """This process's import path for the new one: the project, and the user's module from
    the current directory, as `handoff conform` imported it."""
    return os.pathsep.join([os.getcwd(), *[path for path in sys.path if path]])


class _workspace:
    """A folder for the homes and the witness, removed afterwards with every process the
    runtime left (should its stop have failed). The SDK's own log records of a failed call
    (a traceback each) are kept from the terminal: the row says what failed."""

    def __enter__(self) -> tuple[Path, Witness]:
        self.quiet = quiet_sdk_logs()
        self.quiet.__enter__()
        self.before = descendant_pids()
        self.folder = Path(tempfile.mkdtemp(prefix="handoff-conform-"))
        self.witness = Witness(self.folder).__enter__()
        return self.folder, self.witness

    def __exit__(self, *_) -> None:
        try:
            self.witness.__exit__()
            kill_descendants_since(self.before)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.quiet.__exit__(None, None, None)


@contextlib.contextmanager
def quiet_sdk_logs() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in ("copilot", "asyncio")]
    saved = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, was in zip(loggers, saved):
            logger.disabled = was
