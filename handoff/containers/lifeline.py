"""The run's end of the lifeline every container worker holds.

A process the coordinator starts dies with it (the kernel's parent-death signal, see
processes.py). A container's first process is not the coordinator's child: the engine's
monitor (podman's conmon) starts it, so that signal cannot reach it, and a SIGKILLed run
would leave its containers running. So each container worker opens a TCP connection to
this server when it starts (handoff/worker/lifeline.py) and ends when the connection does.
The server accepts and holds connections and never writes; when the run ends, however it
ends, the kernel closes them, the workers exit, and with each worker (its container's
process 1) the container's whole PID namespace goes.
"""

from __future__ import annotations

import asyncio
import contextlib


class Lifeline:
    def __init__(self) -> None:
        self._server: asyncio.base_events.Server | None = None
        self._held: set[asyncio.StreamWriter] = set()
        self.address = ""

    async def start(self, host: str) -> str:
        self._server = await asyncio.start_server(self._hold, host, 0)
        port = self._server.sockets[0].getsockname()[1]
        self.address = f"{host}:{port}"
        return self.address

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._held.add(writer)
        try:
            await reader.read()  # a worker sends nothing: this returns when it has gone
        finally:
            self._held.discard(writer)
            writer.close()

    def close(self) -> None:
        """Let go of every container still holding on (their workers end), and stop listening."""
        for writer in list(self._held):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._held.clear()
        if self._server is not None:
            self._server.close()
            self._server = None
