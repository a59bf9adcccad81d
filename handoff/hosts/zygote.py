"""Workers forked from a process that has already imported the SDK.

Why: importing the Copilot SDK costs about 0.65 s of CPU (its generated RPC module
defines some 1,500 dataclasses), and a run starts dozens of workers on a machine whose
cores the runtimes already keep busy. The zygote pays that once per run; each worker is
then a ``fork()`` of it, ready in milliseconds.

Why that does not weaken any proof: a forked worker is a new OS process with its own pid,
its own process group and its own address space, and it starts its own runtime after the
fork. The zygote holds nothing but imported modules: it never creates a session, never
starts a runtime and never receives anything from a worker except its exit status, so no
context can travel from one worker to the next through it.

The protocol, over a Unix SEQPACKET socket (one message per packet): the coordinator sends
``{"cwd", "env"}`` with three file descriptors attached (the worker's stdin, stdout and
stderr); the zygote forks and answers ``{"pid"}``, and later ``{"exit": code}`` on the
same connection when that worker ends (a negative code is the signal that ended it, as in
asyncio). The worker side is ``python -m handoff.worker``'s own ``main``, unchanged.

Workers on this machine and on simulated namespace hosts are forked (a host's worker then
moves itself into the host's namespaces: entering.py); an SSH host starts its worker the
ordinary way, through its sshd. The zygote is a way of launching workers, so it lives with
the hosts; what it runs after the fork is handoff/worker/, unchanged.
"""

from __future__ import annotations

import asyncio
import json
import os
import selectors
import signal
import socket
import sys
from pathlib import Path

from handoff.processes import ProcessTracker, die_with

READY = "zygote ready"
SOCKET_NAME = "zygote.sock"  # in the run directory
START_TIMEOUT = 30.0
MESSAGE_LIMIT = 1 << 20  # the environment travels in the request; 1 MiB is far above any real one


# --- the coordinator's side ---------------------------------------------------------------

class ForkedWorker:
    """A worker forked by the zygote, with the parts of asyncio's Process the coordinator
    uses: ``pid``, ``stdin``, ``stdout`` and ``wait()``."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader, channel: socket.socket):
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None
        self._channel = channel
        self._exit: asyncio.Task | None = None

    async def wait(self) -> int:
        """The exit code. Safe to time out and call again: one task reads the reply, so a
        reply that arrives as a caller gives up is kept for the next call."""
        if self._exit is None:
            self._exit = asyncio.get_running_loop().create_task(self._receive_exit())
        self.returncode = await asyncio.shield(self._exit)
        return self.returncode

    async def _receive_exit(self) -> int:
        try:
            reply = await asyncio.get_running_loop().sock_recv(self._channel, MESSAGE_LIMIT)
        finally:
            self._channel.close()
        # No reply means the zygote itself was killed (an interrupted run): so was this worker.
        return json.loads(reply)["exit"] if reply else -signal.SIGKILL


class Zygote:
    """The coordinator's handle on the zygote process of one run."""

    def __init__(self, tracker: ProcessTracker, run_dir: Path, preload: tuple[str, ...] = ()):
        self.tracker = tracker
        self.run_dir = run_dir  # the socket's directory: private to this run, removed with it
        self.log = run_dir / "zygote.stderr"
        self.preload = preload  # modules some of this run's workers import, imported once here

    async def start(self) -> None:
        # The zygote binds the socket's name in its working directory: a Unix socket's path
        # may not pass 107 bytes, and the run directory's depends on TMPDIR.
        with self.log.open("wb") as stderr:
            process = await self.tracker.spawn(sys.executable, "-m", "handoff.hosts.zygote", SOCKET_NAME,
                                               *self.preload, cwd=self.run_dir,
                                               stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                                               stderr=stderr)
        try:
            line = await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT)
        except asyncio.TimeoutError:
            line = b""
        if line.decode().strip() != READY:
            self.tracker.kill_tree(process.pid)
            said = self.log.read_text(errors="replace").strip().splitlines()
            raise RuntimeError(f"the worker zygote did not start: {said[-1] if said else 'it said nothing'}")

    async def fork(self, env: dict[str, str], cwd: Path, stderr, host: dict | None = None) -> ForkedWorker:
        """A new worker, with its stdin and stdout as pipes to us and ``stderr`` (a file)
        as its stderr; registered with the tracker so that nothing outlives the run.
        With ``host`` (NamespaceHost.entry()), the worker first moves itself into that
        simulated host, and ``cwd`` is a path there."""
        loop = asyncio.get_running_loop()
        directory = os.open(self.run_dir, os.O_PATH | os.O_DIRECTORY)  # first: nothing to close if it fails
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        channel.setblocking(False)
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        try:
            # Reached through this process's descriptor of the run directory: a short path
            # however long the directory's own is.
            await loop.sock_connect(channel, f"/proc/self/fd/{directory}/{SOCKET_NAME}")
            request = json.dumps({"cwd": str(cwd), "env": env, "host": host}).encode()
            socket.send_fds(channel, [request], [stdin_read, stdout_write, stderr.fileno()])
            reply = await loop.sock_recv(channel, MESSAGE_LIMIT)
        except BaseException:
            channel.close()
            for fd in (stdin_write, stdout_read):
                os.close(fd)
            raise
        finally:
            os.close(directory)
            os.close(stdin_read)
            os.close(stdout_write)
        if not reply:
            channel.close()
            raise RuntimeError(f"the worker zygote ended; its log is {self.log}")
        pid = json.loads(reply)["pid"]
        self.tracker.adopt(pid)
        stdout = asyncio.StreamReader(loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout, loop=loop), os.fdopen(stdout_read, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(stdin_write, "wb", 0))
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        return ForkedWorker(pid, stdin, stdout, channel)


# --- the zygote's side ----------------------------------------------------------------------

def serve(path: str, preload: list[str]) -> int:
    # The expensive part, once: every worker forked from here starts with these loaded.
    import concurrent.futures.thread  # noqa: F401  (asyncio's default executor, which the SDK uses)
    import importlib

    import handoff.hosts.entering  # noqa: F401
    import handoff.worker.__main__  # noqa: F401
    import handoff.worker.interpreter  # noqa: F401  (and with it the SDK)

    for module in preload:  # e.g. psycopg, ~0.1 s of CPU in each PostgreSQL worker otherwise
        importlib.import_module(module)

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)  # SIGCHLD wakes the selector
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    workers: dict[int, socket.socket] = {}
    print(READY, flush=True)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                connection, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(connection, MESSAGE_LIMIT, 3)
                zygote = os.getpid()
                pid = os.fork()
                if pid == 0:
                    _become_worker(json.loads(message), fds, zygote)  # never returns
                for fd in fds:
                    os.close(fd)
                connection.send(json.dumps({"pid": pid}).encode())
                workers[pid] = connection
            else:
                os.read(wake_read, 4096)
                _report_exits(workers)


def _report_exits(workers: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = workers.pop(pid, None)
        if connection is not None:
            try:
                connection.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
            except OSError:
                pass  # the coordinator stopped listening (an interrupted run)
            connection.close()


def _become_worker(request: dict, fds: list[int], zygote: int) -> None:
    """In the forked child: detach from the zygote, take the given stdio, run the worker."""
    code = 1
    try:
        die_with(zygote)  # which dies with the coordinator: nothing outlives a killed run
        os.setsid()  # its own session and process group, as a spawned worker has
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        # Nothing of the zygote's stays open. Its socket objects still exist in this
        # process, but are never finalized: the worker ends with os._exit.
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        if request.get("host"):
            from handoff.hosts.entering import move_into

            move_into(request["host"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        from handoff.worker.__main__ import main

        code = main()
    except Exception as error:  # before the worker's main: it has no event line to say so
        print(f"the forked worker could not start: {error}", file=sys.stderr)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: python -m handoff.hosts.zygote SOCKET [MODULE...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(serve(sys.argv[1], sys.argv[2:]))
