"""Ctrl-C inside the run's event loop (handoff/processes.py, StopOnce.cancelling): the first
signal cancels the run at an ``await``, never raises where it happens to land (once it
landed inside the selector's bookkeeping, and the cleanup after it broke), and the ones
after it are ignored. Real signals, sent to this process."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket

import pytest

from handoff.processes import StopOnce


async def _reading_sockets(stop: StopOnce, cleaned: list[str]) -> None:
    """What the run's loop does all the time: socket reads registered with the selector and
    removed again (the zygote's replies are read so), until it is cancelled."""
    loop = asyncio.get_running_loop()
    with stop.cancelling(asyncio.current_task()):
        try:
            for _ in range(3):  # a first Ctrl-C, then two more that must not cut the cleanup short
                loop.call_later(0.2, os.kill, os.getpid(), signal.SIGINT)
            while True:
                left, right = socket.socketpair()
                left.setblocking(False)
                try:
                    loop.call_soon(right.send, b"x")  # after the read is registered: the read waits for it
                    await loop.sock_recv(left, 1)
                finally:
                    left.close()
                    right.close()
        finally:
            await asyncio.sleep(0.3)  # the cleanup awaits too, and the later signals arrive meanwhile
            cleaned.append("done")


def test_the_first_signal_cancels_the_run_and_the_others_are_ignored(caplog):
    cleaned: list[str] = []
    with caplog.at_level(logging.ERROR, logger="asyncio"), StopOnce() as stop:
        with pytest.raises(asyncio.CancelledError):
            asyncio.run(_reading_sockets(stop, cleaned))
        assert stop.stopped
    assert cleaned == ["done"]
    assert caplog.records == []  # no task left holding an exception nobody retrieved
