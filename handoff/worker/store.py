"""A worker's side of where sessions are kept, one interface for both kinds:

* :class:`HomeStore` — the runtime's own home directory (``session-state/<id>/``), with an
  optional registry file beside it for owners and receipts;
* :class:`DatabaseStore` — a database reached through the SDK's SessionFs provider, with
  the registry in the same database.

Either way the worker reads a session's event log through :meth:`events_log`: its exact
bytes, as stored, for its own evidence and for the guard's receipts (text decoding or
newline translation would let a changed log look unchanged).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from handoff.eventlog import events_path
from handoff.registry import Registry
from handoff.session_ids import safe_id
from handoff.stores.database import connect
from handoff.stores.files import SessionFiles


class HomeStore:
    files: Callable[[str], SessionFiles] | None = None  # no SessionFs provider: the runtime writes its home

    def __init__(self, home: Path, registry_url: str | None):
        self.home = home
        self._database = connect(registry_url) if registry_url else None
        self.registry = Registry(self._database) if self._database else None

    def events_log(self, session_id: str) -> bytes | None:
        if not safe_id(session_id):
            return None  # not a name the runtime would have made a directory of
        path = events_path(self.home, session_id)
        return path.read_bytes() if path.is_file() else None

    def close(self) -> None:
        if self._database:
            self._database.close()


class DatabaseStore:
    def __init__(self, url: str, home: Path):
        self.database = connect(url)
        SessionFiles.create_schema(self.database)
        self.registry = Registry(self.database)
        self.home = str(home)
        self._files: dict[str, SessionFiles] = {}

    def files(self, session_id: str) -> SessionFiles:
        """The one SessionFiles of a session in this worker (the provider and the
        worker's own evidence reading must see the same object)."""
        if session_id not in self._files:
            self._files[session_id] = SessionFiles(self.database, session_id, self.home)
        return self._files[session_id]

    def events_log(self, session_id: str) -> bytes | None:
        text = self.files(session_id).read_events()
        return None if text is None else text.encode("utf-8", errors="surrogateescape")

    def close(self) -> None:
        self.database.close()


def open_store(database_url: str | None, registry_url: str | None, home: Path) -> HomeStore | DatabaseStore:
    return DatabaseStore(database_url, home) if database_url else HomeStore(home, registry_url)
