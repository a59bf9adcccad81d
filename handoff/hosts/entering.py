"""Moving the calling process into a simulated host, for workers forked from the zygote.

A spawned worker reaches its host through ``ip netns exec`` + ``unshare`` + a shell that
builds the host's view of the files and then execs Python (namespace.py). A forked worker
is already a Python process with the SDK imported, so it does the same steps itself:

1. join the host's network namespace (``setns``, what ``ip netns exec`` does);
2. take new UTS, mount and PID namespaces (``unshare``);
3. fork once more, because only a child enters a new PID namespace: the child becomes the
   host's process 1, as a spawned worker is; the parent only waits and passes its exit
   status on, and its death kills the child (``PR_SET_PDEATHSIG``, with a pipe to catch
   a parent that died before that was set), so killing the pid the coordinator knows
   still kills the worker;
4. in the child, run the same shell script the spawned path runs to build the view (private
   mounts, a fresh /proc and /sys, the host's hostname, its home and user directory,
   tmpfs over everything else of the run).

After that the process sees exactly what a spawned worker on that host sees. Python 3.11
has no ``os.setns``/``os.unshare`` (3.12 does), hence libc through ctypes.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys

from handoff.hosts.network import NETNS_DIR

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1


class EnterError(RuntimeError):
    pass


def _libc_call(name: str, *args: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        errno = ctypes.get_errno()
        raise EnterError(f"{name} failed: {os.strerror(errno)}")


def move_into(host: dict) -> None:
    """Make the calling (single-threaded, just forked) process a process of ``host``:
    ``{"netns": name, "script": shell, "script_env": {...}}`` as NamespaceHost.entry()
    builds it. Returns in the child only; the parent exits when the child does."""
    network = os.open(f"{NETNS_DIR}/{host['netns']}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        _libc_call("setns", network, CLONE_NEWNET)
    finally:
        os.close(network)
    _libc_call("unshare", CLONE_NEWUTS | CLONE_NEWNS | CLONE_NEWPID)
    # The parent holds the write end of this pipe until it dies: the child sees EOF on
    # it if the parent was already gone before PR_SET_PDEATHSIG took effect.
    parent_alive, parent_holds = os.pipe()
    child = os.fork()
    if child != 0:
        os.close(parent_alive)
        _wait_and_pass_on(child)  # never returns
    os.close(parent_holds)
    _libc_call("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([parent_alive], [], [], 0)[0]:  # EOF: the parent died before the line above
        os._exit(1)
    os.close(parent_alive)
    built = subprocess.run(["sh", "-c", host["script"], "handoff-host"], env=host["script_env"],
                           stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr)
    if built.returncode != 0:
        raise EnterError(f"building the host's view failed (exit code {built.returncode}); see the lines above")


def _wait_and_pass_on(child: int) -> None:
    """The parent left outside the PID namespace: hold nothing of the worker's pipes, wait,
    and end the way the child ended, so the zygote reports the child's status."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        signal_number = os.WTERMSIG(status)
        if signal_number not in (signal.SIGKILL, signal.SIGSTOP):  # those two cannot be given a handler
            signal.signal(signal_number, signal.SIG_DFL)
        os.kill(os.getpid(), signal_number)
        os._exit(128 + signal_number)  # only if the signal did not end this process
    os._exit(os.waitstatus_to_exitcode(status))
