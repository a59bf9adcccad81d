"""Persistence through a SessionFs provider, with the real runtime: a session created,
told the fact and closed through the provider, then resumed and asked — in the same
process, and in a new process with a home of its own, so that the provider is the only
thing the two share; the same after the session was compacted (its history replaced by
the model's summary, the files rewritten); and whether a runtime with a home of its own
finds the session at all (discovery); and whether every file the runtime wrote through
the provider (the event log, ``workspace.yaml``, the checkpoints' index, ...) reads back
the same in a new process. Each answer is judged as a run's are: it names the fact, and
the witness model saw the fact in what it was sent.

The new process imports the provider itself, by its ``MODULE:FACTORY`` (as another
server of the app would): ``python -m handoff.conform.resume``. It prints its answer as
one JSON line.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
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
from handoff.worker.sdk import Passing, Provider, Runtime

SCENARIO = "conform"
PROCESS_SECONDS = 120.0  # a new process that takes longer is unknown: it hangs
HOLD_SECONDS = 60.0  # a question that has not reached the model by then is not coming
STOP_SECONDS = 10.0  # stopping a client whose runtime was killed may never answer


@dataclass(frozen=True)
class Found:
    """What a runtime with a home of its own, on the same provider, finds of a session."""
    listed: bool  # list_sessions lists it
    metadata: bool  # get_session_metadata returns something for it
    problem: str | None = None


@dataclass(frozen=True)
class Shared:
    """What two runtimes, each with a home of its own, left in the session's log when both
    resumed it through the provider and each took a turn while the other had it open."""
    answered: int  # of the two questions
    events: int
    branch_points: int  # events that more than one later event names as parent: a fork
    already_in_use: bool  # the second resume's event says the session was open elsewhere
    kept_out: str | None = None  # the second's resume or turn failed: in whose words
    problem: str | None = None


@dataclass(frozen=True)
class Copied:
    """The session's files as the writing process reads them through the provider after
    the close, and as a new process reads them through a provider of its own: path ->
    SHA-256 of the content."""
    written: dict[str, str]
    read_elsewhere: dict[str, str]
    problem: str | None = None
    unsure: bool = False


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
    with workspace() as (folder, witness):
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
    with workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        problem = asyncio.run(tell(factory, session_id, witness.url, "tell", fact, folder / "home-a", compacted))
        if problem:
            return Heard(None, None, problem)
        try:
            said, problem = asyncio.run(_resumed_elsewhere(spec, session_id, witness.url, fact, folder / "home-b"))
        except TimeoutError as hung:
            return Heard(None, None, str(hung), unsure=True)
        return Heard(said, witness.fact_sent("new-process"), problem)


def files_elsewhere(factory: Callable[[Any], Any], spec: str | None, fact: Fact) -> Copied:
    """Created, told and closed here, every file the runtime wrote through the provider
    noted; each read back through the provider here and by a new process that imports it
    by ``spec``."""
    if spec is None:
        return Copied({}, {}, "a new process imports the provider by its MODULE:FACTORY, and none was given",
                      unsure=True)
    with workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        written: set[str] = set()
        noted = lambda session: _Noting(factory(session), written)  # noqa: E731
        problem = asyncio.run(tell(noted, session_id, witness.url, "tell", fact, folder / "home-a"))
        if problem:
            return Copied({}, {}, problem)
        try:
            here = asyncio.run(session_files(factory, session_id, sorted(written)))
            said = asyncio.run(_in_a_new_process([spec, session_id, "--files", json.dumps(sorted(written))]))
        except TimeoutError as hung:
            return Copied({}, {}, str(hung), unsure=True)
        except LookupError as unreadable:
            return Copied({}, {}, f"what the runtime wrote could not be read back here: {unreadable}")
        return Copied(here, said.get("files") or {}, said.get("problem"))


async def session_files(factory: Callable[[Any], Any], session_id: str, paths: list[str]) -> dict[str, str]:
    """Each of ``paths`` as a provider the factory makes for the session reads it through
    the SDK's adapter: path -> SHA-256 of the content, or absent when it is not there.
    LookupError: a read failed otherwise."""
    from types import SimpleNamespace

    from handoff.worker.sdk import FS_NOT_FOUND, session_fs_handler

    handler = session_fs_handler(factory(SimpleNamespace(session_id=session_id)))
    found: dict[str, str] = {}
    for path in paths:
        read = await handler.read_file(SimpleNamespace(path=path))
        error = getattr(read, "error", None)
        if error is not None and getattr(error.code, "value", error.code) == FS_NOT_FOUND:
            continue
        if error is not None:
            raise LookupError(f"read_file({path}) failed: {error.message}")
        found[path] = hashlib.sha256(read.content.encode()).hexdigest()
    return found


class _Noting(Passing):
    """Notes which files the runtime leaves written: written or appended, less what it
    removed, moved where it renamed them."""

    def __init__(self, inner: Any, written: set[str]):
        super().__init__(inner)
        self.written = written

    def _under(self, path: str) -> set[str]:
        return {noted for noted in self.written if noted == path or noted.startswith(path.rstrip("/") + "/")}

    def saw(self, op: str, *args: Any) -> None:
        if op in ("write_file", "append_file"):
            self.written.add(args[0])
        elif op == "rm":
            self.written -= self._under(args[0])
        elif op == "rename":
            src, dest = args
            moved = self._under(src)
            self.written -= moved
            self.written |= {dest.rstrip("/") + noted[len(src.rstrip("/")):] for noted in moved}


def two_resumers(factory: Callable[[Any], Any], fact: Fact) -> Shared:
    """Created, told and closed; then resumed by two runtimes at once, each with a home of
    its own: the second asks while the first has the session open, then the first asks;
    the log is read back through the provider."""
    with workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        problem = asyncio.run(tell(factory, session_id, witness.url, "tell", fact, folder / "home-a"))
        if problem:
            return Shared(0, 0, 0, False, problem=problem)
        return asyncio.run(_both_write(factory, session_id, witness.url, fact, folder))


async def _both_write(factory: Callable[[Any], Any], session_id: str, witness_url: str, fact: Fact,
                      folder: Path) -> Shared:
    from types import SimpleNamespace

    from handoff.eventlog import parse_events, summarize
    from handoff.worker.sdk import STATE_ROOT, session_fs_handler

    first, second = (Runtime(str(ready_runtime()), str(folder / home), provider(witness_url, step, fact),
                             fs_factory=factory) for home, step in (("home-b", "first"), ("home-c", "second")))
    answered, kept_out = 0, None
    try:
        await first.start()
        await second.start()
        opened = await first.resume(session_id)
        try:  # while the first has it open: a provider that keeps a second writer out refuses here
            other = await second.resume(session_id)
            answered += bool(await second.send(other, fact.question_prompt, {}))
            await second.close(other)
        except Exception as error:
            kept_out = f"{type(error).__name__}: {error}"
        answered += bool(await first.send(opened, fact.question_prompt, {}))
        await first.close(opened)
    except Exception as error:
        return Shared(answered, 0, 0, False, kept_out, f"resuming and asking failed: {type(error).__name__}: {error}")
    finally:
        await first.stop()
        await second.stop()
    handler = session_fs_handler(factory(SimpleNamespace(session_id=session_id)))
    read = await handler.read_file(SimpleNamespace(path=f"{STATE_ROOT}/events.jsonl"))
    if getattr(read, "error", None) is not None:
        return Shared(answered, 0, 0, False, kept_out, f"the log could not be read back: {read.error.message}")
    summary = summarize(*parse_events(read.content.encode()))
    return Shared(answered, summary.events, summary.branch_points, any(r.already_in_use for r in summary.resumes),
                  kept_out)


def killed_mid_turn(factory: Callable[[Any], Any], fact: Fact) -> Heard:
    """Created, told and closed; then resumed by a writer whose runtime is killed with
    SIGKILL while the model is answering its question (the witness holds the answer, so
    the kill lands inside the turn); then resumed by a runtime with a home of its own,
    which asks again: turn 1 must be there, whatever the killed turn left."""
    with workspace() as (folder, witness):
        session_id = f"conform-{uuid.uuid4().hex[:12]}"
        problem = asyncio.run(tell(factory, session_id, witness.url, "tell", fact, folder / "home-a"))
        if problem:
            return Heard(None, None, problem)
        problem = asyncio.run(_killed_while_asking(factory, session_id, witness, fact, folder / "home-b"))
        if problem:
            return Heard(None, None, problem, unsure=True)
        answer, problem = asyncio.run(ask(factory, session_id, witness.url, "after-kill", fact, folder / "home-c"))
        return Heard(answer, witness.fact_sent("after-kill"),
                     problem and f"after the writer was killed mid-turn, resuming and asking failed: {problem}")


async def _killed_while_asking(factory: Callable[[Any], Any], session_id: str, witness: Witness, fact: Fact,
                               home: Path) -> str | None:
    """What kept the kill from landing inside the turn (the suite's problem), or None."""
    held = (SCENARIO, "killed", None)  # the witness's key for the writer's requests: no turn header
    holds = witness.server.RequestHandlerClass.holds
    holds.want(held)
    before = descendant_pids()
    runtime = Runtime(str(ready_runtime()), str(home), provider(witness.url, "killed", fact), fs_factory=factory)
    asking = None
    try:
        await runtime.start()
        session = await runtime.resume(session_id)
        asking = asyncio.ensure_future(runtime.send(session, fact.question_prompt, {}))
        if not await asyncio.to_thread(holds.wait_held, held, HOLD_SECONDS):
            return f"the writer's question did not reach the model within {HOLD_SECONDS:.0f} s"
        kill_descendants_since(before)  # the runtime, and all it started: SIGKILL
        return None
    except Exception as error:
        return f"the writer failed before the kill: {type(error).__name__}: {error}"
    finally:
        holds.release(held)
        if asking is not None:
            asking.cancel()
            with contextlib.suppress(BaseException):
                await asking
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(runtime.stop(), STOP_SECONDS)


def discovery(factory: Callable[[Any], Any], fact: Fact) -> Found:
    """Created, told and closed here; then a runtime with a home of its own, on the same
    provider, lists the sessions and asks for this one's metadata."""
    with workspace() as (folder, witness):
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
    said = await _in_a_new_process([spec, session_id, witness_url, fact.value, fact.topic, str(home)])
    return said.get("answer"), said.get("problem") and (f"a new process, with a home of its own, could not resume "
                                                        f"it through the provider: {said['problem']}")


async def _in_a_new_process(arguments: list[str]) -> dict[str, Any]:
    """What ``python -m handoff.conform.resume ARGUMENTS`` printed as its last line (a
    JSON object), or ``{"problem": ...}`` when it failed; TimeoutError when it hangs."""
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
        return {"problem": f"the new process failed (exit {process.returncode}): {last}"}
    return json.loads(lines[-1])


def _python_path() -> str:
    """This process's import path for the new one: the project, and the user's module from
    the current directory, as `handoff conform` imported it."""
    return os.pathsep.join([os.getcwd(), *[path for path in sys.path if path]])


class workspace:
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
    """The SDK's and asyncio's records, their loggers' children's too (a runtime killed on
    purpose makes the SDK log its broken pipe), kept from the terminal: the row says what
    failed."""
    loggers = [logging.getLogger(name) for name in ("copilot", "asyncio")]
    saved = [(logger.disabled, logger.propagate) for logger in loggers]
    kept_out = logging.NullHandler()  # a child's record stops here, and never reaches the last-resort handler
    for logger in loggers:
        logger.disabled, logger.propagate = True, False
        logger.addHandler(kept_out)
    try:
        yield
    finally:
        for logger, (disabled, propagate) in zip(loggers, saved):
            logger.disabled, logger.propagate = disabled, propagate
            logger.removeHandler(kept_out)
