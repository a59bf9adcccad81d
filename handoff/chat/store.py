"""Where the chat keeps its sessions: a folder, checked before the server starts.

The folder holds the runtime's home (``home/``: the sessions' event logs), the registry
beside it (``registry.db``: who owns which session, the guard's receipts and leases) and
the app's key (``app.key``: what session ids are minted with, and passwords and logins
derived from). All three outlive the server, so a server started again on the same
folder continues every conversation, and refuses the same people.
"""

from __future__ import annotations

import errno
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from handoff.errors import UserError
from handoff.runtime_locator import PROJECT_ROOT

DEFAULT_FOLDER = PROJECT_ROOT / ".state" / "chat"
KEY_FILE = "app.key"
HOME = "home"
REGISTRY = "registry.db"
KEY_BYTES = 32


@dataclass(frozen=True)
class ChatStore:
    folder: Path

    @property
    def home(self) -> Path:
        return self.folder / HOME

    @property
    def registry_url(self) -> str:
        return f"sqlite:///{self.folder / REGISTRY}"

    def key(self) -> bytes:
        """The app's key, made on first use (readable by its owner only) and then read."""
        path = self.folder / KEY_FILE
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            key = path.read_bytes()
            if len(key) != KEY_BYTES:
                raise UserError(f"--store {self.folder}: {KEY_FILE} is not a key this tool made "
                                f"({len(key)} bytes, not {KEY_BYTES}); name another folder") from None
            return key
        key = secrets.token_bytes(KEY_BYTES)
        with os.fdopen(descriptor, "wb") as written:
            written.write(key)
        return key


def chat_store(where: Path) -> ChatStore:
    """The folder ``where`` as a chat store: new, empty, or one a chat made. Anything else
    is one line naming the problem (exit 2), before anything starts."""
    folder = where.expanduser().absolute()
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--store {where}: that is a file, not a folder; name a folder for the chat's sessions")
    if folder.is_dir():
        entries = {entry.name for entry in folder.iterdir()}
        if entries and KEY_FILE not in entries:
            raise UserError(f"--store {where}: that folder holds other files and no chat store ({KEY_FILE} is "
                            f"missing); name an empty or new folder")
        if KEY_FILE in entries:
            ChatStore(folder).key()  # a key this tool did not make is refused before anything is added
    try:
        (folder / HOME).mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{secrets.token_hex(4)}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        why = "it is not writable" if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else error.strerror
        raise UserError(f"--store {where}: cannot keep sessions there ({why}); name a folder you can write") from None
    store = ChatStore(folder)
    store.key()
    return store
