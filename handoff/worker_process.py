"""One worker process, from its start to its reaping: the way the tool runs a worker.

Whoever knows where it runs starts it (a host, the zygote's fork, a plain spawn) and hands
the process over; :class:`WorkerProcess` writes its spec to its stdin, reads its stdout
line by line — each line kept as the worker wrote it and decoded once, as it comes, into
the protocol's typed event (:class:`handoff.protocol.Stdout`) — holds it to a deadline,
and, however the block that uses it ends, kills it and everything it started and reaps
it. The step driver (handoff/coordinator/step_driver.py) and the bench (bench/procs.py)
run their workers through it; the lab runs no worker process (it drives the SDK in its
own process, which is what it shows).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

from handoff.processes import ProcessTracker
from handoff.protocol import Cpu, Event, Stdout

WORKER_EXIT_GRACE_SECONDS = 5.0  # from a worker's last output to its exit, which normally takes milliseconds

Heard = Callable[[Event], Awaitable[None]]


class WorkerProcess:
    """A started worker: its process, what it said, and how it ended."""

    def __init__(self, tracker: ProcessTracker, process: asyncio.subprocess.Process, stderr_path: Path):
        self.tracker = tracker
        self.process = process
        self.stderr_path = stderr_path
        self.said = Stdout()  # every stdout line as it came, and its event
        self.timed_out = False
        self.exit_code: int | None = None
        self.killed_cpu: Cpu | None = None  # what it and its runtime had used when it was killed (None: it had ended)

    @classmethod
    @contextlib.asynccontextmanager
    async def started(cls, tracker: ProcessTracker, stderr_path: Path,
                      start: Callable[..., Awaitable[asyncio.subprocess.Process]]) -> AsyncIterator[WorkerProcess]:
        """The worker ``start(stderr)`` starts, its stderr written to ``stderr_path``; when
        the block ends, however it ends, it is killed with everything below it and reaped."""
        with stderr_path.open("wb") as stderr:
            worker = cls(tracker, await start(stderr), stderr_path)
            try:
                yield worker
            finally:
                await worker._reap()

    @property
    def pid(self) -> int:
        return self.process.pid

    async def feed(self, spec: bytes, close: bool = False) -> None:
        """Write the spec to its stdin; ``close``: nothing more follows (no fault point
        will need to release it)."""
        self.process.stdin.write(spec)
        await self.process.stdin.drain()
        if close:
            self.process.stdin.close()

    async def tell(self, message: bytes) -> None:
        """Write to its stdin if it still runs (a fault may just have killed it)."""
        if self.process.returncode is None:
            with contextlib.suppress(OSError, RuntimeError):
                self.process.stdin.write(message)
                await self.process.stdin.drain()

    async def run(self, timeout: float, heard: Heard | None = None) -> None:
        """Read its events until its stdout ends, giving each to ``heard`` as it comes,
        then give it a moment to exit (a forked host worker's outer process passes the
        exit status on a moment after its output ends); past ``timeout`` seconds from now
        it is :attr:`timed_out`. Whatever is still running then is killed when the block ends."""
        try:
            await asyncio.wait_for(self._read(heard), timeout)
        except asyncio.TimeoutError:
            self.timed_out = True
        else:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.process.wait(), WORKER_EXIT_GRACE_SECONDS)

    async def _read(self, heard: Heard | None) -> None:
        async for raw in self.process.stdout:
            event = self.said.add(raw.decode("utf-8", errors="replace").rstrip("\n"))
            if event is not None and heard is not None:  # a line that is no event is kept as it came
                await heard(event)

    async def _reap(self) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.process.stdin.close()
        self.tracker.kill_tree(self.pid)  # a worker that finished is gone already
        self.exit_code = await self.process.wait()
        self.killed_cpu = self.tracker.cpu_when_killed.get(self.pid)
        self.tracker.forget(self.pid)

    def stderr_tail(self, chars: int) -> str:
        """The last ``chars`` characters it wrote to its stderr."""
        return self.stderr_path.read_text(errors="replace")[-chars:]
