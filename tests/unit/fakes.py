"""A fake host and fake workers for driving the coordinator without a runtime.

A :class:`FakeWorker` reads its WorkerSpec like a real worker and answers with the events
a *script* gives for that spec — protocol events, raw lines, or :data:`HANG` (wait until
killed). The step driver, the scenario run and the scheduler cannot tell it from a real
one, which is what lets their relay, time-outs and fault points be tested in
milliseconds. Nothing here stands in for the runtime in an end-to-end test.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import time
from pathlib import Path
from typing import Callable, Iterable

from handoff.hosts.base import Host
from handoff.protocol import Finished, Ready, Turn, WorkerSpec, encode

HANG = object()  # in a script: stop here until the worker is killed
# An asyncio.Event in a script: stop here until somebody else sets it.
WAIT_RELEASE = object()  # in a script: stop here until the coordinator writes a release line
_pids = itertools.count(900_000)


def ready(spec: WorkerSpec) -> Ready:
    return Ready(t=time.time(), pid=0, hostname=spec.host, address=None, home=spec.home, runtime_version="fake",
                 sdk_version="fake", runtime_start_ms=1)


def finished(ok: bool = True) -> Finished:
    return Finished(t=time.time(), ok=ok)


def answered(spec: WorkerSpec, number: int, kind: str, answer: str, session_id: str | None = None) -> Turn:
    return Turn(t=time.time(), turn=number, kind=kind, session_id=session_id or spec.session_id, prompt="p",
                answer=answer, ms=1)


Script = Callable[[WorkerSpec], Iterable[object]]


class _Stdin:
    def __init__(self, worker: FakeWorker):
        self.worker = worker
        self.data = b""

    def write(self, data: bytes) -> None:
        """The first line is the spec (the worker starts); every later one a release."""
        self.data += data
        if self.worker.spec is None and b"\n" in self.data:
            line, _, self.data = self.data.partition(b"\n")
            self.worker.spec = WorkerSpec.from_json(line)
            self.worker.task = asyncio.get_running_loop().create_task(self.worker.play())
        elif self.worker.spec is not None:
            self.worker.releases += self.data.count(b"\n")
            self.data = b""
            self.worker.released.set()

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


class FakeWorker:
    def __init__(self, script: Script):
        self.pid = next(_pids)
        self.script = script
        self.spec: WorkerSpec | None = None
        self.stdin = _Stdin(self)
        self.stdout = asyncio.StreamReader()
        self.returncode: int | None = None
        self.task: asyncio.Task | None = None
        self.releases = 0
        self.released = asyncio.Event()
        self._ended = asyncio.Event()

    async def play(self) -> None:
        for item in self.script(self.spec):
            if item is HANG:
                await asyncio.Event().wait()
            if item is WAIT_RELEASE:
                await self.released.wait()
                self.released.clear()
                continue
            if isinstance(item, asyncio.Event):
                await item.wait()
                continue
            line = item.encode() + b"\n" if isinstance(item, str) else encode(item)
            self.stdout.feed_data(line)
            await asyncio.sleep(0)
        self.end(0)

    def end(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
            self.stdout.feed_eof()
            self._ended.set()

    def kill(self) -> None:
        if self.task:
            self.task.cancel()
        self.end(-signal.SIGKILL)

    async def wait(self) -> int:
        await self._ended.wait()
        return self.returncode


class FakeTracker:
    """Kills fake workers by pid; records what it was asked to kill."""

    def __init__(self) -> None:
        self.workers: dict[int, FakeWorker] = {}
        self.killed: list[int] = []
        self.cpu_when_killed: dict = {}

    def kill_tree(self, pid: int) -> None:
        self.killed.append(pid)
        if pid in self.workers:
            self.workers[pid].kill()

    def forget(self, pid: int) -> None:
        pass

    async def wait_group_gone(self, group: int, timeout: float) -> bool:
        return True


class FakeHost(Host):
    """A host whose workers follow ``script``; every spec it was given is kept."""

    kind = "fake"
    sees_run_files = True

    def __init__(self, name: str, script: Script, tracker: FakeTracker, fail_to_start: str | None = None):
        super().__init__(name)
        self.script = script
        self.tracker = tracker
        self.fail_to_start = fail_to_start
        self.workers: list[FakeWorker] = []
        self.launches: list = []  # how each worker was to be started (another SDK, another runtime's cache)
        self.closed = False

    async def start_worker(self, tracker, store: Path, stderr, cwd: Path, launch=None) -> FakeWorker:
        if self.fail_to_start:
            raise RuntimeError(self.fail_to_start)
        self.launches.append(launch)
        worker = FakeWorker(self.script)
        self.workers.append(worker)
        self.tracker.workers[worker.pid] = worker
        return worker

    @property
    def specs(self) -> list[WorkerSpec]:
        return [worker.spec for worker in self.workers]

    def home(self, store: Path) -> str:
        return str(store)

    async def close(self) -> None:
        self.closed = True
