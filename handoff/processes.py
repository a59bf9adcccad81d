"""Every process the tool starts, tracked so that none outlives a run.

Workers are started in their own process group, and the runtime each worker spawns
inherits it, so a group kill reaches both. On Linux the coordinator also makes itself a
*child subreaper*: a runtime whose worker died is re-parented to the coordinator rather
than to init, so psutil still finds it among the coordinator's descendants. Every
process started here dies with the coordinator, also when it is SIGKILLed (the kernel's
parent-death signal); what a killed coordinator leaves that is not a process is found
by its owner mark (leftovers.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shutil
import signal
import sys
from typing import Awaitable, Callable, TypeVar

import psutil

from handoff import runtime_markers
from handoff.protocol import Cpu

T = TypeVar("T")

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
# util-linux's setpriv sets PR_SET_PDEATHSIG and execs the command; the signal comes when
# the thread that spawned it ends, so processes are only spawned from the event loop's.
DIE_WITH_PARENT = ("setpriv", "--pdeathsig", "KILL", "--")


def can_die_with_parent() -> bool:
    """Whether setpriv, which every process the tool starts goes through, is on the PATH."""
    return shutil.which(DIE_WITH_PARENT[0]) is not None


class StopOnce:
    """While active, the first SIGINT or SIGTERM stops the run (KeyboardInterrupt, which
    starts the cleanup) and any signal after it is ignored, so that a second Ctrl-C
    cannot cut the cleanup short. (A no-op handler, not SIG_IGN, which children would
    inherit.) Also keeps asyncio from installing its own SIGINT handler."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __enter__(self) -> "StopOnce":
        self._saved = {number: signal.getsignal(number) for number in self.SIGNALS}
        self._stopped = False
        for number in self.SIGNALS:
            signal.signal(number, self._first)
        return self

    def _first(self, *_) -> None:
        self._stopped = True
        for number in self.SIGNALS:
            signal.signal(number, _ignore)
        raise KeyboardInterrupt

    def _later(self, *_) -> None:
        self._stopped = True

    @contextlib.contextmanager
    def cancelling(self, task: asyncio.Task):
        """Inside the event loop: the first signal cancels ``task`` (the run), and any after
        it is ignored. A KeyboardInterrupt raised by the handler lands wherever Python
        happens to be, and inside the loop that can be the middle of its own bookkeeping
        (a socket half registered with the selector), which then breaks the cleanup that
        follows; a cancellation arrives at an ``await``, where the code expects it. The
        run's caller turns the cancellation back into KeyboardInterrupt (:meth:`stopped`)."""
        loop = asyncio.get_running_loop()

        def first() -> None:
            if not self._stopped:
                self._stopped = True
                task.cancel()

        for number in self.SIGNALS:
            loop.add_signal_handler(number, first)
        try:
            yield
        finally:
            for number in self.SIGNALS:  # the loop's removal puts the default back: ignore instead
                loop.remove_signal_handler(number)
                signal.signal(number, _ignore)

    def run(self, main: Callable[[], Awaitable[T]]) -> T:
        """``asyncio.run(main())``, with the first signal cancelling it at an ``await``
        (:meth:`cancelling`); that cancellation comes back out as KeyboardInterrupt, an
        interrupt as the CLI knows it."""
        async def cancellable() -> T:
            with self.cancelling(asyncio.current_task()):
                return await main()

        try:
            return asyncio.run(cancellable())
        except asyncio.CancelledError:
            if self._stopped:
                raise KeyboardInterrupt from None
            raise

    @property
    def stopped(self) -> bool:
        """Whether a signal has asked the run to stop."""
        return self._stopped

    @contextlib.contextmanager
    def shielded(self):
        """Run the cleanup: no signal interrupts it; one that came meanwhile stops the
        run once the cleanup is done."""
        for number in self.SIGNALS:
            signal.signal(number, self._later)
        already = self._stopped
        yield
        for number in self.SIGNALS:
            signal.signal(number, _ignore)
        if self._stopped and not already:
            raise KeyboardInterrupt

    def __exit__(self, *_) -> None:
        for number, handler in self._saved.items():
            signal.signal(number, handler)


def _ignore(*_) -> None:
    pass


def die_with(parent: int) -> None:
    """Make the calling process get SIGKILL when ``parent`` (its parent) dies, for a
    process that was forked rather than spawned; if the parent is gone already, exit."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)


def _tree(pid: int) -> list[psutil.Process]:
    """A process and everything below it; [] when it is gone."""
    with contextlib.suppress(psutil.NoSuchProcess):
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    return []


def is_runtime(process: psutil.Process) -> bool:
    """The Copilot runtime renames its main thread, so its name is not "copilot"; its argv[0] is."""
    try:
        command = process.cmdline()
    except psutil.Error:
        return False
    return bool(command) and os.path.basename(command[0]) == "copilot"


def cpu_used(victims: list[psutil.Process]) -> Cpu | None:
    """What the live processes among ``victims`` have used so far, in CPU seconds, split
    into the runtimes (with everything below them) and the rest; None when none was
    alive. A zombie is skipped: it ended by itself, and whoever reaps it counts it. Each
    process's reaped children are in it; its live ones are victims of their own."""
    runtimes: set[int] = set()
    for process in victims:
        if is_runtime(process):
            with contextlib.suppress(psutil.Error):
                runtimes |= {process.pid, *(child.pid for child in process.children(recursive=True))}
    worker = runtime = 0.0
    alive = False
    for process in victims:
        with contextlib.suppress(psutil.Error):
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            times = process.cpu_times()
            seconds = times.user + times.system + times.children_user + times.children_system
            if process.pid in runtimes:
                runtime += seconds
            else:
                worker += seconds
            alive = True
    return Cpu(worker=round(worker, 3), runtime=round(runtime, 3)) if alive else None


def kill_all(victims: list[psutil.Process]) -> None:
    """SIGKILL each of ``victims`` and wait until they have ended (reaping those that are
    our children). A runtime among them cannot remove its in-use markers: they are noted
    before the kill and removed once it is dead."""
    markers = runtime_markers.of(victims)
    try:
        for process in victims:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(victims, timeout=5)
    finally:
        runtime_markers.remove(markers)


def become_subreaper() -> None:
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _descendants() -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        return psutil.Process().children(recursive=True)
    return []


def descendant_pids() -> set[int]:
    """The processes below this one now, to tell later ones from (kill_descendants_since)."""
    return {process.pid for process in _descendants()}


def kill_descendants_since(before: set[int]) -> None:
    """Kill every process below this one that was not there ``before`` and still runs: a
    runtime the SDK started, should its stop have failed (kill_all also removes a
    runtime's in-use markers, in the user's own cache, where nothing else would)."""
    kill_all([process for process in _descendants() if process.pid not in before])


def _identity(process: psutil.Process) -> tuple[int, float]:
    """A process as no later one can be: its pid with its start time."""
    try:
        return process.pid, process.create_time()
    except psutil.Error:
        return process.pid, 0.0


class ProcessTracker:
    def __init__(self) -> None:
        self._groups: set[int] = set()
        self._pids: set[int] = set()
        self._running: dict[int, asyncio.subprocess.Process] = {}
        self._companions: dict[int, Callable[[], int | None]] = {}
        # What the processes killed with each tree had used: a killed worker cannot report
        # its own and its runtime's CPU, so the kill notes it (read by handoff/worker_process.py).
        self.cpu_when_killed: dict[int, Cpu] = {}
        # Descendants there already, told apart by pid and start time as psutil reads both:
        # its start times are off the wall clock by up to a second (the boot time it adds
        # them to is whole seconds), so a comparison with time.time() missed processes
        # born in the run's first half second, or took older ones as the run's.
        self._there_before = {_identity(process) for process in _descendants()}
        become_subreaper()

    async def spawn(self, *args: str, **kwargs) -> asyncio.subprocess.Process:
        """Start ``args`` in a session and process group of its own, set to die with this
        process (SIGKILL when it dies, even by SIGKILL: the kernel's parent-death
        signal, set by ``setpriv`` before it execs the command)."""
        process = await asyncio.create_subprocess_exec(*DIE_WITH_PARENT, *args, start_new_session=True, **kwargs)
        self._pids.add(process.pid)
        self._groups.add(process.pid)  # a new session's leader is also its group id
        self._running[process.pid] = process
        return process

    def adopt(self, pid: int) -> None:
        """Track a process another process started for us (a worker forked by the zygote):
        it leads its own process group, so it is killed like a spawned one."""
        self._pids.add(pid)
        self._groups.add(pid)

    def attach(self, pid: int, companion: Callable[[], int | None]) -> None:
        """Kill another process (and its tree) with ``pid``: one that is not below it
        but belongs with it — a container's first process, which the engine's monitor
        starts, not the `podman run` that asked for it. ``companion`` finds its pid when
        it is needed (None when it is not running)."""
        self._companions[pid] = companion

    async def shutdown(self) -> None:
        """Kill and reap every spawned process, inside the event loop that owns them, so
        that an interrupted run closes its pipes instead of leaving them to the GC."""
        for pid, process in list(self._running.items()):
            self.kill_tree(pid)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), 10)
            self.forget(pid)

    def kill_tree(self, pid: int) -> None:
        """SIGKILL a process, everything below it, and its process group.

        The group goes first, in one signal, so a worker and its runtime die at the same
        instant (a crash must not give the runtime a moment to notice and shut down);
        then any descendant that left the group. A Copilot runtime killed this way cannot
        remove its in-use marker files, so they are noted first and removed after."""
        victims = _tree(pid)
        companion = self._companions.get(pid)
        other = companion() if companion else None
        if other is not None:
            victims += _tree(other)
        markers = runtime_markers.of(victims)
        used = cpu_used(victims)
        if used is not None:
            before = self.cpu_when_killed.get(pid, Cpu(worker=0.0, runtime=0.0))
            self.cpu_when_killed[pid] = Cpu(worker=before.worker + used.worker, runtime=before.runtime + used.runtime)
        try:
            if pid in self._groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
            for process in victims:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.kill()
            # Our own children are reaped by whoever awaits them (asyncio); waiting on them
            # here would steal their exit status from it.
            psutil.wait_procs([p for p in victims if p.pid not in self._pids], timeout=5)
        finally:
            runtime_markers.remove(markers)

    def forget(self, pid: int) -> None:
        self._pids.discard(pid)
        self._companions.pop(pid, None)
        self._running.pop(pid, None)
        self.cpu_when_killed.pop(pid, None)

    def _born_since_start(self) -> list[psutil.Process]:
        """Descendants started after this tracker was made: a process forked by a spawn
        that an interrupt cut short was never registered, but as a subreaper we still
        see it among our descendants."""
        found = []
        for child in _descendants():
            with contextlib.suppress(psutil.NoSuchProcess):
                if _identity(child) not in self._there_before and child.status() != psutil.STATUS_ZOMBIE:
                    found.append(child)
        return found

    async def wait_group_gone(self, group: int, timeout: float) -> bool:
        """Wait until no process of ``group`` runs (zombies aside); False on time-out."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            members = []
            for process in psutil.process_iter(["pid", "status"]):
                with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                    if os.getpgid(process.pid) == group and process.info["status"] != psutil.STATUS_ZOMBIE:
                        members.append(process)
            if not members:
                return True
            await asyncio.sleep(0.05)
        return False

    def alive(self) -> list[psutil.Process]:
        """Tracked processes and their descendants that still run."""
        found: dict[int, psutil.Process] = {}
        for pid in self._pids:
            with contextlib.suppress(psutil.NoSuchProcess):
                root = psutil.Process(pid)
                if root.status() != psutil.STATUS_ZOMBIE:
                    found[pid] = root
                for child in root.children(recursive=True):
                    found[child.pid] = child
        if self._groups:  # one look at every process, however many groups the run has made
            for process in psutil.process_iter(["pid"]):
                with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                    if os.getpgid(process.pid) in self._groups and process.status() != psutil.STATUS_ZOMBIE:
                        found[process.pid] = process
        found.pop(os.getpid(), None)
        return list(found.values())

    def stop_all(self) -> None:
        """Kill everything still running; called on success, failure and Ctrl-C alike."""
        for pid in list(self._pids):
            self.kill_tree(pid)
        for group in list(self._groups):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        kill_all(self.alive() + self._born_since_start())
        self.reap_orphans()

    @staticmethod
    def reap_orphans() -> None:
        """Collect exit statuses of re-parented grandchildren so no zombie remains."""
        with contextlib.suppress(ChildProcessError):
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
