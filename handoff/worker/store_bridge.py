"""The store bridge: a worker's store (store.py), served over a pipe to the Node.js worker.

The Node.js worker (sdks/node/worker.mjs) implements the TypeScript SDK's SessionFs
provider (``createSessionFsProvider``) and keeps the registry, as the Python worker does;
what it does not do is talk to the database itself. It starts ``python -m
handoff.worker.store_bridge`` and sends each provider call and registry write here, so
the rows a Node.js step writes are made by the same code, under the same schema and the
same reconnect rules (handoff/stores/files.py, handoff/worker/store.py), as a Python
step's: a session either SDK stored, the other finds. The bridge opens no runtime and
imports no SDK.

One JSON object per line each way, answered in order. The first request opens the store:
``{"op": "open", "store": URL|null, "registry": URL|null, "home": DIR}`` (on stdin, so a
password in a URL is not on a command line), answered ``{"ok": true, "value": {"store":
the URL without its password, "registry": whether there is one}}``. Then ``{"id": N,
"op": OP, "session": ID, "args": [...]}``, answered ``{"id": N, "ok": true, "value": ...}``
or ``{"id": N, "ok": false, "code": "ENOENT"|..., "message": ...}`` (an errno's name when
the error has one, which the SDK turns into its SessionFs error; ``UNKNOWN`` otherwise).
The bridge ends at the end of its stdin: when the Node.js worker ends, however it ends.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import json
import sys
from pathlib import Path
from typing import Any

from handoff.stores.database import redacted
from handoff.worker.store import DatabaseStore, HomeStore, open_store

# The SessionFs provider's calls, as SessionFiles (handoff/stores/files.py) names them.
FILE_CALLS = ("read_file", "write_file", "append_file", "exists", "mkdir", "readdir", "rm", "rename", "stat")
# The registry's writes a raw step makes (handoff/worker/sessions.py): who made a session,
# where and with which runtime and SDK, who resumed it, and each turn's prompt.
REGISTRY_CALLS = ("created", "resumed", "turned")


class Bridge:
    def __init__(self, store: HomeStore | DatabaseStore):
        self.store = store

    async def call(self, op: str, session: str, args: list) -> Any:
        if op in FILE_CALLS:
            if self.store.files is None:
                raise LookupError("this step's sessions are kept in its home: there is no SessionFs store")
            value = await getattr(self.store.files(session), op)(*args)
            if op == "stat":
                return {"is_dir": value.is_dir, "size": value.size, "mtime": value.mtime, "birthtime": value.birthtime}
            if op == "readdir":
                return [[name, is_dir] for name, is_dir in value]
            return value
        if op in REGISTRY_CALLS:
            if self.store.registry is None:
                return False
            getattr(self.store.registry, op)(session, *args)
            return True
        if op == "registered":  # discover: a database store's registry, most recently active first
            if not isinstance(self.store, DatabaseStore):
                raise LookupError("discover needs a database store with a registry")
            return [found.session_id for found in self.store.registry.sessions()]
        if op == "events_log":
            log = self.store.events_log(session)
            return None if log is None else base64.b64encode(log).decode("ascii")
        raise LookupError(f"the store bridge has no call {op!r}")


def _failure(error: BaseException) -> dict:
    code = errno.errorcode.get(error.errno, "UNKNOWN") if isinstance(error, OSError) and error.errno else "UNKNOWN"
    message = redacted(" ".join(str(error).split())) or type(error).__name__
    return {"ok": False, "code": code, "message": message}


def serve(lines, write) -> None:
    """Answer ``lines`` (the requests, the first one ``open``) through ``write``."""
    opened = json.loads(next(lines))
    try:
        if opened.get("op") != "open":
            raise ValueError("the first request must open the store")
        store = open_store(opened.get("store"), opened.get("registry"), Path(opened["home"]).expanduser())
    except Exception as error:
        write({**_failure(error), "message": f"cannot open the session store: {_failure(error)['message']}"})
        return
    write({"ok": True, "value": {"store": redacted(opened.get("store")), "registry": store.registry is not None}})
    bridge = Bridge(store)
    loop = asyncio.new_event_loop()
    try:
        for line in lines:
            request = json.loads(line)
            try:
                value = loop.run_until_complete(bridge.call(request["op"], request.get("session", ""),
                                                            request.get("args", [])))
                answer = {"ok": True, "value": value}
            except Exception as error:
                answer = _failure(error)
            write({"id": request.get("id"), **answer})
    finally:
        loop.close()
        store.close()


def main() -> None:
    def write(answer: dict) -> None:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()

    serve((line for line in sys.stdin if line.strip()), write)


if __name__ == "__main__":
    main()
