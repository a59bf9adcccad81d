"""What a turn costs through a SessionFs provider as the session grows, and whether a long
session's files still read back as written.

The real runtime takes one turn through the provider, every call it makes recorded in
order with what it wrote (on runtime 1.0.102 a turn is one append of about 2.7 KB to the
event log). That turn is then played again and again through the SDK's adapter, on a
fresh provider for a session of its own, to 10 turns and on to 200: each call timed, the
files a resume reads (everything appended to) read back and timed, and what the
provider's stat says they hold. A long session is not run through the runtime itself:
200 real turns would take minutes, and what the provider is asked per turn does not
change with the count.

The figures are what this machine measured, side by side in one run; the outcome rests on
what they cannot blur: after 200 turns every file reads back exactly as written, and its
size is its bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import statistics
import time
import uuid
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

from handoff.conform.contract import adapter_error
from handoff.conform.persistence import provider, workspace
from handoff.fact import Fact
from handoff.hosts.local import ready_runtime
from handoff.worker.sdk import Passing, Runtime, session_fs_handler

TURNS = (10, 200)  # the session's length at each figure
WINDOW = 10  # each figure is the median over the last this many turns before it
PLAY_SECONDS = 120.0  # playing the turns longer than this is unknown: the provider hangs


@dataclass(frozen=True)
class Call:
    """One call the runtime made of the provider, as the SDK's adapter is asked it."""
    op: str  # the adapter's method: append_file, write_file, rename, ...
    path: str = ""
    content: str | None = None  # written or appended
    src: str = ""
    dest: str = ""
    recursive: bool = False
    force: bool = False

    def params(self) -> SimpleNamespace:
        return SimpleNamespace(path=self.path, content=self.content, mode=None, src=self.src, dest=self.dest,
                               recursive=self.recursive, force=self.force)


@dataclass(frozen=True)
class Grown:
    """The cost at one length of the session."""
    turns: int
    call_ms: float  # median time of one call, over the window
    turn_ms: float  # median time of one turn's calls together, over the window
    read_ms: float  # reading back every file appended to, as a resume reads the log
    stored: int  # bytes the provider's stat gives for the files the turns left


@dataclass(frozen=True)
class Cost:
    calls: int  # in one turn
    written: int  # bytes one turn writes or appends
    grown: tuple[Grown, ...] = ()
    problem: str | None = None
    unsure: bool = False  # the problem is a hang or the suite's, not a wrong answer


class _Recording(Passing):
    """Records every call that changes or reads a file, in order, while ``calls`` is a list."""

    def __init__(self, inner: Any):
        super().__init__(inner)
        self.calls: list[Call] | None = None

    def saw(self, op: str, *args: Any) -> None:
        if self.calls is None:
            return
        if op in ("write_file", "append_file"):
            self.calls.append(Call(op, args[0], content=args[1]))
        elif op == "rename":
            self.calls.append(Call(op, src=args[0], dest=args[1]))
        elif op == "rm":
            self.calls.append(Call(op, args[0], recursive=args[1], force=args[2]))
        elif op == "mkdir":
            self.calls.append(Call(op, args[0], recursive=args[1]))
        else:
            self.calls.append(Call(op, args[0]))


def cost(factory: Callable[[Any], Any], fact: Fact) -> Cost:
    """One real turn recorded, then played to each length in :data:`TURNS`."""
    with workspace() as (folder, witness):
        made: list[_Recording] = []

        def recorded(session: Any) -> _Recording:
            made.append(_Recording(factory(session)))
            return made[-1]

        turn, problem = asyncio.run(_one_turn(recorded, made, witness.url, fact, folder / "home"))
    if problem:
        return Cost(0, 0, problem=problem)
    if not turn:
        return Cost(0, 0, problem="the runtime's turn made no call of the provider", unsure=True)
    written = sum(len(call.content.encode()) for call in turn if call.content is not None)
    try:
        grown, problem = asyncio.run(asyncio.wait_for(_played(factory, turn), PLAY_SECONDS))
    except asyncio.TimeoutError:
        return Cost(len(turn), written, problem=f"playing {TURNS[-1]} turns took more than {PLAY_SECONDS:.0f} s: "
                                                f"the provider hangs, or waits on something", unsure=True)
    return Cost(len(turn), written, tuple(grown), problem)


async def _one_turn(factory: Callable[[Any], Any], made: list[_Recording], witness_url: str, fact: Fact,
                    home: Any) -> tuple[list[Call], str | None]:
    """Create and tell through the provider, then record the calls of one more turn."""
    runtime = Runtime(str(ready_runtime()), str(home), provider(witness_url, "cost", fact), fs_factory=factory)
    turn: list[Call] = []
    try:
        await runtime.start()
        session = await runtime.create(f"conform-{uuid.uuid4().hex[:12]}")
        await runtime.send(session, fact.remember_prompt, {})
        for recording in made:
            recording.calls = turn
        await runtime.send(session, fact.question_prompt, {})
        for recording in made:
            recording.calls = None
        await runtime.close(session)
    except Exception as error:  # the user's provider answers through the runtime: anything may come back
        return [], f"the turn to measure failed: {type(error).__name__}: {error}"
    finally:
        await runtime.stop()
    return turn, None


async def _played(factory: Callable[[Any], Any], turn: list[Call]) -> tuple[list[Grown], str | None]:
    handler = session_fs_handler(factory(SimpleNamespace(session_id=f"conform-cost-{uuid.uuid4().hex[:12]}")))
    expected: dict[str, str] = {}  # path -> what it must hold, as the calls so far leave it
    appended = sorted({call.path for call in turn if call.op == "append_file"})
    call_times: list[list[float]] = []
    grown: list[Grown] = []
    try:
        for count in range(1, TURNS[-1] + 1):
            times = []
            for call in turn:
                started = time.perf_counter()
                answer = await getattr(handler, call.op)(call.params())
                times.append(time.perf_counter() - started)
                if adapter_error(answer) is not None:
                    return grown, (f"turn {count}: {call.op}({call.path or call.src}) failed: "
                                   f"{adapter_error(answer).message}")
                _follow(expected, call)
            call_times.append(times)
            if count in TURNS:
                measured, problem = await _measured(handler, expected, appended, call_times[-WINDOW:], count)
                if problem:
                    return grown, problem
                grown.append(measured)
    finally:
        for path in {*expected, *(call.path for call in turn if call.path)}:
            await handler.rm(SimpleNamespace(path=path, recursive=True, force=True))
    return grown, None


def _follow(expected: dict[str, str], call: Call) -> None:
    """What the files must hold after ``call``."""
    if call.op == "write_file":
        expected[call.path] = call.content or ""
    elif call.op == "append_file":
        expected[call.path] = expected.get(call.path, "") + (call.content or "")
    elif call.op == "rename":
        moved = {path: held for path, held in expected.items() if path == call.src or path.startswith(call.src + "/")}
        for path, held in moved.items():
            del expected[path]
            expected[call.dest + path[len(call.src):]] = held
    elif call.op == "rm":
        for path in [path for path in expected if path == call.path or path.startswith(call.path + "/")]:
            del expected[path]


async def _measured(handler: Any, expected: dict[str, str], appended: list[str], window: list[list[float]],
                    count: int) -> tuple[Grown, str | None]:
    """The window's figures, and whether every file holds exactly what it must."""
    started = time.perf_counter()
    for path in appended:
        await handler.read_file(SimpleNamespace(path=path))
    read_ms = (time.perf_counter() - started) * 1000
    stored = 0
    for path, held in sorted(expected.items()):
        read = await handler.read_file(SimpleNamespace(path=path))
        if adapter_error(read) is not None:
            return _none(count), f"after {count} turns, {path} could not be read back: {adapter_error(read).message}"
        if hashlib.sha256(read.content.encode()).digest() != hashlib.sha256(held.encode()).digest():
            return _none(count), (f"after {count} turns, {path} reads back {len(read.content.encode()):,} bytes that "
                                  f"are not the {len(held.encode()):,} written")
        info = await handler.stat(SimpleNamespace(path=path))
        if adapter_error(info) is not None or info.size != len(held.encode()):
            said = adapter_error(info).message if adapter_error(info) is not None else f"{info.size:,} bytes"
            return _none(count), f"after {count} turns, stat of {path} says {said}, not {len(held.encode()):,} bytes"
        stored += info.size
    calls = [seconds for turn in window for seconds in turn]
    return Grown(count, statistics.median(calls) * 1000, statistics.median(map(sum, window)) * 1000, read_ms,
                 stored), None


def _none(count: int) -> Grown:
    return Grown(count, 0.0, 0.0, 0.0, 0)
