"""A process-local SessionFs provider, for the conformance suite's new-process row: the
files provider's operations on a tree kept in this process's memory, shared by every
provider the process makes, lost when it ends."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import partial
from pathlib import Path

from examples.files_provider import FilesProvider

# One folder per process, in memory in effect: a new process gets a new, empty one.
_MINE = Path(tempfile.mkdtemp(prefix="memory-provider-"))
atexit.register(partial(shutil.rmtree, _MINE, ignore_errors=True))


def factory(session) -> FilesProvider:
    return FilesProvider(_MINE / session.session_id)
