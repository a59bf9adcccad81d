"""The worker's end of a container's lifeline (handoff/containers/lifeline.py).

Inside a container the worker is not the coordinator's child, so the parent-death signal
that ends every other worker with its run cannot reach it. Given ``HANDOFF_LIFELINE``
(``address:port``, set only for container workers), it connects there before it does
anything, and a thread waits on the connection: when it closes — the run ended, even by
SIGKILL — the worker exits at once. It is its container's first process, so the kernel
then ends everything else in the container, its runtime included.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time

VARIABLE = "HANDOFF_LIFELINE"
CONNECT_SECONDS = 10.0  # the run listens before any container starts; this is only for a slow start
LOST = 75  # exit code; nobody is left to read it but the engine's log


def hold(address: str | None = None) -> None:
    address = address if address is not None else os.environ.get(VARIABLE)
    if not address:
        return
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + CONNECT_SECONDS
    while True:
        try:
            connection = socket.create_connection((host, int(port)), timeout=2)
            break
        except OSError as error:
            if time.monotonic() > deadline:
                _lost(f"cannot reach the run at {address} ({error}): it has ended")
            time.sleep(0.1)
    connection.settimeout(None)
    threading.Thread(target=_watch, args=(connection,), name="lifeline", daemon=True).start()


def _watch(connection: socket.socket) -> None:
    try:
        while connection.recv(64):
            pass
    except OSError:
        pass
    _lost("the run that started this worker has ended")


def _lost(why: str) -> None:
    print(f"worker: {why}; exiting", file=sys.stderr, flush=True)
    os._exit(LOST)
