"""The run's end of the lifeline every container worker holds.

A process the coordinator starts dies with it (the kernel's parent-death signal, see
processes.py). A container's first process is not the coordinator's child: the engine's
monitor (podman's conmon) starts it, so that signal cannot reach it, and a SIGKILLed run
would leave its containers running. So each container worker opens a TCP connection to
this server when it starts (handoff/worker/lifeline.py) and ends when the connection does.
The server accepts and holds connections and never reads or writes; when the run ends,
however it ends, the kernel closes them, the workers exit, and with each worker (its
container's process 1) the container's whole PID namespace goes.
"""

from __future__ import annotations

import asyncio


class _Held(asyncio.Protocol):
    """One container's connection, held open until it or the run goes."""

    def __init__(self, held: set[asyncio.Transport]):
        self.held = held
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.held.add(transport)

    def connection_lost(self, exc) -> None:
        self.held.discard(self.transport)


class Lifeline:
    def __init__(self) -> None:
        self._server: asyncio.base_events.Server | None = None
        self._held: set[asyncio.Transport] = set()
        self.address = ""

    async def start(self, host: str) -> str:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Held(self._held), host, 0)
        port = self._server.sockets[0].getsockname()[1]
        self.address = f"{host}:{port}"
        return self.address

    def close(self) -> None:
        """Let go of every container still holding on (their workers end), and stop
        listening; from the event loop, before it closes."""
        for transport in list(self._held):
            transport.abort()
        self._held.clear()
        if self._server is not None:
            self._server.close()
            self._server = None
