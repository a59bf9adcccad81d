"""A SessionFs provider that keeps only the event log where another process finds it: the
files provider's operations, with every path but an ``events.jsonl`` in a tree of this
process's own (as a provider that puts the log in a database and the rest in a temporary
folder would). For the conformance suite's row on the session's files."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import partial
from pathlib import Path

from copilot.generated.rpc import SessionFSReaddirWithTypesEntry

from examples.files_provider import FilesProvider, root

_MINE = Path(tempfile.mkdtemp(prefix="log-only-provider-"))
atexit.register(partial(shutil.rmtree, _MINE, ignore_errors=True))


class LogOnlyProvider(FilesProvider):
    def __init__(self, durable: Path, local: Path):
        super().__init__(durable)
        self.local = FilesProvider(local)

    def _path(self, path: str) -> Path:
        return super()._path(path) if path.endswith("events.jsonl") else self.local._path(path)

    async def readdir(self, path: str) -> list[str]:
        return sorted({entry.name for entry in await self.readdir_with_types(path)})

    async def readdir_with_types(self, path: str) -> list[SessionFSReaddirWithTypesEntry]:
        found = {}
        for folder in (FilesProvider._path(self, path), self.local._path(path)):
            for entry in sorted(folder.iterdir()) if folder.is_dir() else ():
                found.setdefault(entry.name, "directory" if entry.is_dir() else "file")
        if not found and not self.local._path(path).is_dir() and not FilesProvider._path(self, path).is_dir():
            raise FileNotFoundError(2, "No such file or directory", path)
        return [SessionFSReaddirWithTypesEntry.from_dict({"name": name, "type": kind}) for name, kind in found.items()]


def factory(session) -> LogOnlyProvider:
    return LogOnlyProvider(root() / session.session_id, _MINE / session.session_id)
