"""`handoff chat`: the web chat served until Ctrl-C, on the real runtime and the witness.

Everything a wrong setting could break is checked before anything starts (the runtime,
the store folder, the port: one line and exit 2). Then the witness starts as the Copilot
API, with a token per local user; each user gets a runtime of their own whose client
holds that token, so the witness's evidence names the user behind every request; and
uvicorn serves the page on the port already bound. Ctrl-C or SIGTERM stops the server
gracefully, then the runtimes and the witness; a second signal cannot cut that short.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from handoff.chat.accounts import Accounts
from handoff.chat.store import ChatStore, DatabaseChatStore, chat_store
from handoff.errors import UserError
from handoff.hosts.local import app_runtime_environment, ready_runtime
from handoff.lab.copilot_path import Tokens, pick_model
from handoff.lab.runner import sdk_log_to
from handoff.processes import ProcessTracker, descendant_pids, kill_descendants_since
from handoff.witness import copilot_api
from handoff.witness.launch import WitnessStartError, start_witness

SDK_LOG = "chat.log"  # in the store folder: the SDK's records and every request that failed
EVIDENCE = "witness-evidence.jsonl"  # in the store folder: the requests each user's runtime made
STOP_SECONDS = 10.0

Say = Callable[[str], None]


@dataclass(frozen=True)
class ChatOptions:
    host: str
    port: int
    store: str  # a folder, or a PostgreSQL URL (handoff/chat/store.py)
    evidence: Path | None = None  # None: EVIDENCE in the store's folder (a database store's: this server's)


def serve_chat(options: ChatOptions, say: Say) -> int:
    """Check, start, serve until stopped; 0 when stopped by a signal. Bad input raises
    UserError before anything starts."""
    runtime_path = ready_runtime()
    listener = _bound(options.host, options.port)
    before = descendant_pids()
    store = None
    try:
        store = chat_store(options.store)
        with sdk_log_to(store.folder / SDK_LOG):
            return asyncio.run(_serve(options, store, str(runtime_path), listener, say))
    finally:
        listener.close()
        kill_descendants_since(before)  # a runtime whose stop failed
        if store is not None:
            store.close()


def _bound(host: str, port: int) -> socket.socket:
    """The server's socket, bound now: a port in use is bad input, found before anything starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(128)
    except OSError as error:
        listener.close()
        if error.errno == errno.EADDRINUSE:
            raise UserError(f"--port {port}: something else listens there; choose another port, or 0 for a free one") from None
        raise UserError(f"--host {host} --port {port}: cannot listen there ({error.strerror})") from None
    return listener


async def _serve(options: ChatOptions, store: ChatStore | DatabaseChatStore, runtime_path: str, listener: socket.socket, say: Say) -> int:
    from handoff.chat.conversations import Conversations, guarded_sessions
    from handoff.chat.web import make_app, web_server
    from handoff.protocol import WITNESS_COPILOT_API, Backend
    from handoff.worker.model import model_source
    from handoff.worker.sdk import Runtime, SessionOptions

    tracker = ProcessTracker()
    runtimes: dict[str, Runtime] = {}
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stopping.set)
    home = store.opened()
    try:
        tokens = Tokens()
        evidence = options.evidence or store.folder / EVIDENCE
        try:
            witness_url = await start_witness(tracker, store.folder / "witness.stderr", "--evidence", str(evidence),
                                              env=tokens.witness_environment())
        except WitnessStartError as error:
            raise UserError(str(error)) from None
        # The model the lab's sample picks from what the service lists (the witness's list).
        model = pick_model(list(copilot_api.MODELS), "")
        backend = Backend(kind=WITNESS_COPILOT_API, model=model)
        for token, user in tokens.issued.items():
            source = model_source(backend, witness_url, token=token)
            # A resume names no model, as the lab's resume_session(id) does: the session keeps its own.
            runtimes[user] = Runtime(runtime_path, str(store.home), source, files=store.files(home),
                                     env=app_runtime_environment(),
                                     options=SessionOptions(model=None, created_with=model))
        versions = await asyncio.gather(*(runtime.start() for runtime in runtimes.values()))
        server_name = f"{socket.gethostname()}:{os.getpid()}"
        key = store.key()  # read once: a database store's is a round trip
        conversations = Conversations(home, {
            user: (runtime, guarded_sessions(runtime, version, home, key, user, server_name))
            for (user, runtime), version in zip(runtimes.items(), versions)}, model)
        accounts = Accounts(key, copilot_api.PRINCIPALS)
        server = web_server(make_app(accounts, conversations))
        url = _url(listener)
        say(f"handoff chat: the witness as the Copilot API, model {model}; store {store.shown}")
        for user in accounts.users:
            say(f"  user {user}, password {accounts.password(user)}")
        say("The browser keeps only the session id; Ctrl-C stops the server.")
        say(f"Listening: {url}")
        serving = asyncio.create_task(server.serve(sockets=[listener]))
        await asyncio.wait([serving, asyncio.create_task(stopping.wait())], return_when=asyncio.FIRST_COMPLETED)
        server.should_exit = True
        await serving
        return 0
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):  # a second signal no longer cuts the cleanup short
            loop.add_signal_handler(number, lambda: None)
        for runtime in runtimes.values():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(runtime.stop(), STOP_SECONDS)
        await tracker.shutdown()
        home.close()


def _url(listener: socket.socket) -> str:
    host, port = listener.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
