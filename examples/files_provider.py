"""A SessionFs provider on plain files: each session's tree under a directory of its own.

An example to learn from and to run `handoff conform` on:

    handoff conform examples.files_provider:factory

The root is $FILES_PROVIDER_ROOT (default: files-provider under the temporary directory).
Every path the runtime gives is inside the session's tree: ".." is refused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from copilot.generated.rpc import SessionFSReaddirWithTypesEntry
from copilot.session_fs_provider import SessionFsFileInfo, SessionFsProvider


class FilesProvider(SessionFsProvider):
    def __init__(self, root: Path):
        self.root = root

    def _path(self, path: str) -> Path:
        parts = [part for part in path.split("/") if part not in ("", ".")]
        if ".." in parts:
            raise PermissionError(f"{path}: outside the session's tree")
        return self.root.joinpath(*parts)

    async def read_file(self, path: str) -> str:
        return self._path(path).read_text(encoding="utf-8")

    async def write_file(self, path: str, content: str, mode: int | None = None) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.write_text(content, encoding="utf-8")
        os.replace(partial, target)  # whole or not at all

    async def append_file(self, path: str, content: str, mode: int | None = None) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as file:
            file.write(content)

    async def exists(self, path: str) -> bool:
        return self._path(path).exists()

    async def stat(self, path: str) -> SessionFsFileInfo:
        found = self._path(path).stat()
        return SessionFsFileInfo(is_file=not Path(self._path(path)).is_dir(), is_directory=self._path(path).is_dir(),
                                 size=found.st_size, mtime=datetime.fromtimestamp(found.st_mtime, UTC),
                                 birthtime=datetime.fromtimestamp(found.st_ctime, UTC))

    async def mkdir(self, path: str, recursive: bool, mode: int | None = None) -> None:
        self._path(path).mkdir(parents=recursive, exist_ok=recursive)

    async def readdir(self, path: str) -> list[str]:
        return sorted(entry.name for entry in self._path(path).iterdir())

    async def readdir_with_types(self, path: str) -> list[SessionFSReaddirWithTypesEntry]:
        return [SessionFSReaddirWithTypesEntry.from_dict({"name": entry.name,
                                                          "type": "directory" if entry.is_dir() else "file"})
                for entry in sorted(self._path(path).iterdir())]

    async def rm(self, path: str, recursive: bool, force: bool) -> None:
        target = self._path(path)
        if not target.exists():
            if force:
                return
            raise FileNotFoundError(2, "No such file or directory", path)
        if target.is_dir():
            shutil.rmtree(target) if recursive else target.rmdir()
        else:
            target.unlink()

    async def rename(self, src: str, dest: str) -> None:
        target = self._path(dest)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(self._path(src), target)


def root() -> Path:
    return Path(os.environ.get("FILES_PROVIDER_ROOT") or Path(tempfile.gettempdir()) / "files-provider")


def factory(session) -> FilesProvider:
    """What the app passes to the SDK as create_session_fs_handler."""
    return FilesProvider(root() / session.session_id)
