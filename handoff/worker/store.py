"""A worker's side of a database store: the session files behind the SessionFs
provider, and the registry that records who made which session where."""

from __future__ import annotations

from handoff.registry import Registry
from handoff.stores.database import connect
from handoff.stores.files import SessionFiles


class WorkerStore:
    def __init__(self, url: str, home: str):
        self.database = connect(url)
        SessionFiles.create_schema(self.database)
        self.registry = Registry(self.database)
        self.home = home
        self._files: dict[str, SessionFiles] = {}

    def files(self, session_id: str) -> SessionFiles:
        """The one SessionFiles of a session in this worker (the provider and the
        worker's own evidence reading must see the same object)."""
        if session_id not in self._files:
            self._files[session_id] = SessionFiles(self.database, session_id, self.home)
        return self._files[session_id]

    def events_text(self, session_id: str) -> str | None:
        return self.files(session_id).read_events()

    def close(self) -> None:
        self.database.close()
