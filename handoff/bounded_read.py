"""Reading a file the tool may not have written itself — a stored run's record, a
session's event log — with a bound: it is refused unread when it is no regular file (a
FIFO would block the reader, a device never end) or larger than any such file can be (a
sparse 8 GB run.json was read whole: out of memory). The refusal is an OSError with the
reason as its strerror, so every reader that says "cannot read FILE: why" says it."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class Refused(OSError):
    """A file not read, and why."""

    def __init__(self, path: Path, why: str, code: int = errno.EFBIG):
        super().__init__(code, why, str(path))


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of ``path``: a regular file of at most ``limit`` bytes (links followed)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opened so does not wait for a writer
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise Refused(path, "it is not a regular file (a directory, a FIFO, a device or a socket)", errno.EINVAL)
        if status.st_size > limit:
            raise Refused(path, f"it is {status.st_size:,} bytes, more than such a file can be ({limit:,} at most)")
        data = file.read(limit + 1)
    if len(data) > limit:  # it grew while it was read
        raise Refused(path, f"it is more than {limit:,} bytes, more than such a file can be")
    return data


def values_in(data: bytes) -> int:
    """At most how many JSON values ``data`` decodes into (one document, or one per line):
    every value but a top-level one is the first of its array or object, or follows a
    comma. What memory a decode takes grows with this, far more than with the bytes (a
    record of 500,000 empty steps in 36 MB took 740 MB). Text in strings is counted too,
    which is right for the worker's lines a run record carries: they are decoded later."""
    return data.count(b",") + data.count(b"[") + data.count(b"{") + data.count(b"\n") + 1
