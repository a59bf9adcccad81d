"""The processes a benchmark starts, and the one place that cleans them up.

Everything is spawned through the tool's own ``ProcessTracker`` (its own process group,
and this process made a child subreaper), so a runtime whose parent died is still found
and killed. A ``handoff run`` child gets SIGTERM first and a moment to finish: its own
cleanup removes the network namespaces, bridges and temporary directories it made,
which a SIGKILL would leave behind. Whatever happens — success, failure, Ctrl-C,
SIGTERM — :meth:`Bench.close` kills what is left and removes the temporary root.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import psutil

from handoff import owners, protocol
from handoff.hosts.base import Host, Launch, worker_env
from handoff.hosts.zygote import Zygote
from handoff.processes import ProcessTracker
from handoff.runs.record import RunRecord
from handoff.runtime_locator import locate_runtime
from handoff.witness.launch import start_witness
from handoff.worker_process import WorkerProcess

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CLI_GRACE_SECONDS = 30.0  # a `handoff run` given SIGTERM removes its namespaces, then exits
STEP_TIMEOUT_SECONDS = 300.0


@dataclass
class Finished:
    """A child that ran to its end (or was stopped): what it printed, how long it took."""

    exit_code: int | None
    wall_ms: float
    spawned_wall: float  # time.time() just before the spawn, to line up with event timestamps
    stdout: str = ""
    timed_out: bool = False
    stderr_tail: str = ""


@dataclass
class WorkerRun:
    """One `python -m handoff.worker` step: its protocol events and its wall time."""

    finished: Finished
    events: list[protocol.Event] = field(default_factory=list)

    def first(self, kind: type) -> Any:
        return next((e for e in self.events if isinstance(e, kind)), None)

    def action_ms(self, action: str) -> float | None:
        return next((e.ms for e in self.events if isinstance(e, protocol.ActionDone) and e.action == action), None)

    def turn(self) -> protocol.Turn | None:
        return self.first(protocol.Turn)

    @property
    def errors(self) -> list[str]:
        return [f"{e.action}: {e.message}" for e in self.events if isinstance(e, protocol.ActionFailed)]

    @property
    def ok(self) -> bool:
        done = self.first(protocol.Finished)
        return bool(done and done.ok) and self.finished.exit_code == 0 and not self.finished.timed_out


PROGRESS_LINE = re.compile(rb"^\[\s*\d+/\d+ ")  # `[ 3/28   12.4 s] cross-process: kept, as expected (3.1 s)`


async def _relaying(process: asyncio.subprocess.Process, stdin: bytes | None, stderr_file, label: str):
    """communicate(), but with the child's stderr read line by line: kept in its file, and
    its progress lines echoed as they come."""
    if stdin is not None:
        process.stdin.write(stdin)
        await process.stdin.drain()
        process.stdin.close()

    async def relay() -> None:
        async for line in process.stderr:
            stderr_file.write(line)
            if PROGRESS_LINE.match(line):
                print(f"   {label} {line.decode(errors='replace').rstrip()}", flush=True)

    out, _ = await asyncio.gather(process.stdout.read(), relay())
    await process.wait()
    return out, None


class Bench:
    """Shared state of one `python -m bench`: the tracker, a temporary root, the runtime,
    and a witness model started on first use (one for every benchmark that needs one)."""

    def __init__(self) -> None:
        self.tracker = ProcessTracker()
        self.root = owners.make_directory("handoff-bench-")  # in the ledger: `handoff clean` removes it after a kill
        self._witness_url: str | None = None
        self._witness_pid: int | None = None
        self._zygote: Zygote | None = None
        self._counter = 0

    @functools.cached_property
    def runtime_path(self) -> Path:
        """The installed runtime, found when a benchmark first needs it (not every part of
        the bench does, nor the unit tests of its parts)."""
        return locate_runtime()

    # -- temporary places --------------------------------------------------------------

    @property
    def runs_dir(self) -> Path:
        """Where the `handoff run`s a benchmark starts store their records (not .state/runs)."""
        return self.root / "runs"

    def new_dir(self, prefix: str) -> Path:
        self._counter += 1
        path = self.root / f"{prefix}-{self._counter:04d}"
        path.mkdir(parents=True)
        return path

    # -- the witness model ---------------------------------------------------------------

    async def witness(self) -> str:
        """The shared witness's base URL; started the first time it is asked for."""
        if self._witness_url is None:
            self._witness_url, self._witness_pid = await self.start_witness(self.witness_evidence, "witness")
        return self._witness_url

    async def start_witness(self, evidence: Path, name: str, host: str = "127.0.0.1") -> tuple[str, int | None]:
        """A witness of its own listening on ``host``, recording to ``evidence``: its URL and
        pid (so its CPU can be read). The shared one listens on loopback, which a simulated
        host (a network namespace of its own) cannot reach."""
        before = {p.pid for p in psutil.Process().children()}
        url = await start_witness(self.tracker, self.root / f"{name}.stderr", "--evidence", str(evidence), host=host)
        after = {p.pid for p in psutil.Process().children()}
        return url, next(iter(after - before), None)

    @property
    def witness_evidence(self) -> Path:
        return self.root / "witness-evidence.jsonl"

    @property
    def witness_pid(self) -> int | None:
        return self._witness_pid

    # -- children ------------------------------------------------------------------------

    async def run(self, *args: str, timeout: float = STEP_TIMEOUT_SECONDS, stdin: bytes | None = None,
                  env: dict[str, str] | None = None, graceful: bool = False, cwd: Path = PROJECT_ROOT,
                  progress: str | None = None) -> Finished:
        """Run a command to its end; its stdout is returned, its stderr kept in a file.
        ``graceful``: on time-out or cancellation it gets SIGTERM and CLI_GRACE_SECONDS
        to clean up before the whole tree is killed (for `handoff run`). ``progress``:
        a `handoff run`'s progress lines (one per finished scenario, as it writes them
        when its stderr is not a terminal) are passed on to the bench's output as they
        come, after this label."""
        stderr_path = self.new_dir("stderr") / "stderr"
        with stderr_path.open("wb") as stderr:
            spawned_wall, started = time.time(), time.monotonic()
            process = await self.tracker.spawn(
                *args, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE if progress else stderr, cwd=cwd,
                env=env)
            timed_out = False
            try:
                talk = process.communicate(stdin) if not progress else _relaying(process, stdin, stderr, progress)
                out, _ = await asyncio.wait_for(talk, timeout)
            except asyncio.TimeoutError:
                timed_out, out = True, b""
                await self._stop(process, graceful)
            except BaseException:  # cancelled (Ctrl-C): stop it, then let the cancellation go on
                await self._stop(process, graceful)
                raise
            wall_ms = (time.monotonic() - started) * 1000
            exit_code = process.returncode
            self.tracker.forget(process.pid)
        tail = stderr_path.read_text(errors="replace")[-1500:]
        return Finished(exit_code, wall_ms, spawned_wall, out.decode(errors="replace"), timed_out, tail)

    async def _stop(self, process: asyncio.subprocess.Process, graceful: bool) -> None:
        if graceful and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(process.wait()), CLI_GRACE_SECONDS)
        self.tracker.kill_tree(process.pid)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), 10)

    async def zygote(self) -> Zygote:
        """The tool's zygote (workers forked with the SDK imported, as `handoff run` starts
        them); started the first time it is asked for."""
        if self._zygote is None:
            zygote = Zygote(self.tracker, self.root)
            await zygote.start()
            self._zygote = zygote
        return self._zygote

    async def worker(self, spec_json: bytes, timeout: float = STEP_TIMEOUT_SECONDS,
                     on_spawn=None, launch: Launch = Launch(), forked: bool = False,
                     host: Host | None = None, home: Path | None = None) -> WorkerRun:
        """One step in a new `python -m handoff.worker` process (``forked``: a fork of the
        tool's zygote, as `handoff run` starts a local worker), fed a WorkerSpec on stdin as
        the coordinator does; ``on_spawn(pid)`` lets a caller sample the process's memory;
        ``launch`` starts it with another SDK's interpreter or another runtime's cache.
        With ``host`` (a simulated host), the host starts it as the step driver has it do,
        with ``home`` (a directory here) as the host's home. It is run (fed, read, timed,
        killed and reaped) as the step driver runs one: handoff/worker_process.py."""
        workdir = self.new_dir("worker")

        async def start(stderr) -> asyncio.subprocess.Process:
            if host is not None:
                return await host.start_worker(self.tracker, home, stderr, workdir)
            if forked:
                return await (await self.zygote()).fork(worker_env(), workdir, stderr)
            return await self.tracker.spawn(
                *launch.command(), stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=stderr, cwd=workdir, env=launch.environment(worker_env()))

        spawned_wall, started = time.time(), time.monotonic()
        async with WorkerProcess.started(self.tracker, workdir / "stderr", start) as worker:
            if on_spawn:
                on_spawn(worker.pid)
            await worker.feed(spec_json, close=True)
            await worker.run(timeout)
        finished = Finished(worker.exit_code, (time.monotonic() - started) * 1000, spawned_wall,
                            timed_out=worker.timed_out, stderr_tail=worker.stderr_tail(1500))
        return WorkerRun(finished, worker.said.events)

    # -- the end ---------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Inside the event loop: kill and reap every child it still owns."""
        await self.tracker.shutdown()

    def close(self) -> None:
        """Outside the event loop, last: nothing left running, nothing left on disk."""
        self.tracker.stop_all()
        shutil.rmtree(self.root, ignore_errors=True)


def run_record(json_path: Path) -> RunRecord | None:
    """The record in a ``handoff run --json`` file, or None when there is none."""
    try:
        return msgspec.json.decode(json_path.read_bytes(), type=RunFile).record
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


class RunFile(msgspec.Struct):
    record: RunRecord


def python_command(*args: str) -> list[str]:
    return [sys.executable, *args]


def handoff_command(*args: str) -> list[str]:
    """`handoff ...` exactly as a user runs it: the venv's console script."""
    script = Path(sys.executable).with_name("handoff")
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "handoff", *args]


class RssSampler:
    """Sums the resident memory of a set of process trees every ``interval`` seconds and
    keeps the peak. RSS counts shared pages once per process, so the sum overstates what
    the machine really spends (the runtimes share their executable's pages): an upper
    bound, which is what a concurrency limit wants."""

    def __init__(self, interval: float = 0.1, roots: set[int] | None = None, exclude: set[int] | None = None):
        self.interval = interval
        self.roots = roots  # None: every descendant of this process
        self.exclude = exclude or set()
        self.peak_bytes = 0
        self.peak_processes = 0
        self.peak_runtimes = 0  # processes of the Copilot runtime executable
        self.samples = 0
        self._task: asyncio.Task | None = None

    def _members(self, roots: set[int] | None) -> list[psutil.Process]:
        if roots is None:
            tops = [p for p in psutil.Process().children() if p.pid not in self.exclude]
        else:
            tops = []
            for pid in roots:
                with contextlib.suppress(psutil.NoSuchProcess):
                    tops.append(psutil.Process(pid))
        members = []
        for top in tops:
            with contextlib.suppress(psutil.NoSuchProcess):
                members.append(top)
                members.extend(top.children(recursive=True))
        return members

    def sample(self, roots: set[int] | None = None) -> None:
        total, count, runtimes = 0, 0, 0
        for process in self._members(roots if roots is not None else self.roots):
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                if process.status() == psutil.STATUS_ZOMBIE:
                    continue
                total += process.memory_info().rss
                count += 1
                # the runtime renames its main thread, so its name is not "copilot"; its argv[0] is
                command = process.cmdline()
                runtimes += bool(command) and Path(command[0]).name == "copilot"
        self.samples += 1
        if total > self.peak_bytes:
            self.peak_bytes = total
        self.peak_processes = max(self.peak_processes, count)
        self.peak_runtimes = max(self.peak_runtimes, runtimes)

    async def _loop(self) -> None:
        while True:
            roots = None if self.roots is None else set(self.roots)  # a snapshot, taken in the loop
            await asyncio.to_thread(self.sample, roots)
            await asyncio.sleep(self.interval)

    def start(self) -> "RssSampler":
        self._task = asyncio.get_running_loop().create_task(self._loop())
        return self

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

