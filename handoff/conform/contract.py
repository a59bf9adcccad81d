"""The contract a SessionFs provider keeps with the runtime, op by op, on the provider
alone (no runtime): each row a scenario of calls through the SDK's own adapter, which is
what the runtime's requests reach, and the outcome the runtime needs.

A row is data: its name, whether it is required, and a check that returns what went
wrong (None: it held). Each row works under a directory of its own, so one row's
leftovers cannot make another pass or fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Awaitable, Callable

from handoff.worker.sdk import FS_NOT_FOUND

LARGE_CHARACTERS = 3_000_000  # a large tool output, as the runtime stores one
MULTI_BYTE = "naïve café — 漢字 — 🙂 end"  # two-, three- and four-byte UTF-8

Check = Callable[[Any, str], Awaitable[str | None]]  # (the adapter, the row's directory) -> what went wrong


@dataclass(frozen=True)
class ContractRow:
    name: str
    says: str  # what holding it means, in a line
    check: Check
    required: bool = True


def _call(**params: Any) -> SimpleNamespace:
    return SimpleNamespace(**params)


def adapter_error(result: Any) -> Any:
    """The error of an adapter result: a SessionFSError, None, or a result's ``error``."""
    if result is None:
        return None
    return getattr(result, "error", result if hasattr(result, "code") else None)


def _code(result: Any) -> str | None:
    error = adapter_error(result)
    if error is None:
        return None
    code = getattr(error, "code", None)
    return getattr(code, "value", code) or "UNKNOWN"


async def _write(fs: Any, path: str, content: str) -> str | None:
    failed = adapter_error(await fs.write_file(_call(path=path, content=content, mode=None)))
    return None if failed is None else f"write_file({path}) failed: {getattr(failed, 'message', failed)}"


async def _read(fs: Any, path: str) -> tuple[str | None, str | None]:
    """(content, what went wrong)."""
    result = await fs.read_file(_call(path=path))
    if adapter_error(result) is not None:
        return None, f"read_file({path}) failed: {getattr(adapter_error(result), 'message', '')}"
    return result.content, None


def _shown(text: str | None) -> str:
    if text is None:
        return "nothing"
    return repr(text) if len(text) <= 40 else f"{len(text):,} characters ({text[:20]!r}…)"


def round_trip(content: str) -> Check:
    async def check(fs: Any, root: str) -> str | None:
        path = f"{root}/file.txt"
        if problem := await _write(fs, path, content):
            return problem
        read, problem = await _read(fs, path)
        if problem:
            return problem
        return None if read == content else f"wrote {_shown(content)}, read back {_shown(read)}"
    return check


async def overwrite(fs: Any, root: str) -> str | None:
    path = f"{root}/file.txt"
    for content in ("a longer first version\n", "short\n"):
        if problem := await _write(fs, path, content):
            return problem
    read, problem = await _read(fs, path)
    return problem or (None if read == "short\n" else f"a second write left {_shown(read)}, not 'short\\n'")


async def appends(fs: Any, root: str) -> str | None:
    path = f"{root}/events.jsonl"
    if problem := await _write(fs, path, "first\n"):
        return problem
    for line in ("second\n", "third\n"):
        failed = adapter_error(await fs.append_file(_call(path=path, content=line, mode=None)))
        if failed is not None:
            return f"append_file({path}) failed: {getattr(failed, 'message', failed)}"
    read, problem = await _read(fs, path)
    return problem or (None if read == "first\nsecond\nthird\n" else
                       f"after a write and two appends the file holds {_shown(read)}, not the three lines in order")


async def append_creates(fs: Any, root: str) -> str | None:
    path = f"{root}/new/events.jsonl"
    failed = adapter_error(await fs.append_file(_call(path=path, content="only\n", mode=None)))
    if failed is not None:
        return f"append_file to a new file (its directory new too) failed: {getattr(failed, 'message', failed)}"
    read, problem = await _read(fs, path)
    return problem or (None if read == "only\n" else f"the new file holds {_shown(read)}")


async def missing_is_enoent(fs: Any, root: str) -> str | None:
    missing = f"{root}/nothing-here"
    calls = {  # made one at a time: a call that hangs leaves none made and never awaited
        "read_file": lambda: fs.read_file(_call(path=missing)),
        "stat": lambda: fs.stat(_call(path=missing)),
        "readdir": lambda: fs.readdir(_call(path=missing)),
        "readdir_with_types": lambda: fs.readdir_with_types(_call(path=missing)),
        "rm": lambda: fs.rm(_call(path=missing, recursive=False, force=False)),
        "rename": lambda: fs.rename(_call(src=missing, dest=f"{root}/elsewhere")),
    }
    wrong = []
    for name, call in calls.items():
        code = _code(await call())
        if code != FS_NOT_FOUND:
            wrong.append(f"{name} gave {code or 'no error'}")
    exists = await fs.exists(_call(path=missing))
    if getattr(exists, "exists", None) is not False:
        wrong.append("exists said True")
    return None if not wrong else (f"on a missing path the runtime needs {FS_NOT_FOUND} (raise FileNotFoundError): "
                                   + "; ".join(wrong))


async def mkdir(fs: Any, root: str) -> str | None:
    deep = f"{root}/a/b/c"
    failed = adapter_error(await fs.mkdir(_call(path=deep, recursive=True, mode=None)))
    if failed is not None:
        return f"mkdir(recursive) failed: {getattr(failed, 'message', failed)}"
    stat = await fs.stat(_call(path=deep))
    if adapter_error(stat) is not None or not stat.is_directory:
        return "a directory made with mkdir(recursive) is not a directory to stat"
    orphan = _code(await fs.mkdir(_call(path=f"{root}/x/y", recursive=False, mode=None)))
    if orphan is None:
        return "mkdir without recursive made a directory whose parent does not exist"
    return None


async def listing(fs: Any, root: str) -> str | None:
    if problem := await _write(fs, f"{root}/one.txt", "1"):
        return problem
    failed = adapter_error(await fs.mkdir(_call(path=f"{root}/sub", recursive=True, mode=None)))
    if failed is not None:
        return f"mkdir failed: {getattr(failed, 'message', failed)}"
    names = await fs.readdir(_call(path=root))
    typed = await fs.readdir_with_types(_call(path=root))
    if adapter_error(names) is not None or adapter_error(typed) is not None:
        return "readdir or readdir_with_types failed on a directory with a file and a directory"
    listed = sorted(names.entries)
    types = {entry.name: getattr(entry.type, "value", entry.type) for entry in typed.entries}
    if listed != ["one.txt", "sub"]:
        return f"readdir listed {listed}, not ['one.txt', 'sub'] (names, not paths)"
    if types != {"one.txt": "file", "sub": "directory"}:
        return f"readdir_with_types said {types}"
    return None


async def removal(fs: Any, root: str) -> str | None:
    if problem := await _write(fs, f"{root}/tree/leaf/file.txt", "x"):
        return problem
    if problem := await _write(fs, f"{root}/lone.txt", "x"):
        return problem
    for path, recursive in ((f"{root}/lone.txt", False), (f"{root}/tree", True)):
        failed = adapter_error(await fs.rm(_call(path=path, recursive=recursive, force=False)))
        if failed is not None:
            return f"rm({path}, recursive={recursive}) failed: {getattr(failed, 'message', failed)}"
        if getattr(await fs.exists(_call(path=path)), "exists", True):
            return f"{path} still exists after rm"
    if getattr(await fs.exists(_call(path=f"{root}/tree/leaf/file.txt")), "exists", True):
        return "a file under a directory removed recursively still exists"
    forced = adapter_error(await fs.rm(_call(path=f"{root}/never", recursive=False, force=True)))
    return None if forced is None else "rm(force=True) of a missing path failed: force means no error"


async def renaming(fs: Any, root: str) -> str | None:
    if problem := await _write(fs, f"{root}/old.txt", "moved"):
        return problem
    if problem := await _write(fs, f"{root}/dir/inner.txt", "inside"):
        return problem
    for src, dest in ((f"{root}/old.txt", f"{root}/new.txt"), (f"{root}/dir", f"{root}/moved-dir")):
        failed = adapter_error(await fs.rename(_call(src=src, dest=dest)))
        if failed is not None:
            return f"rename({src} → {dest}) failed: {getattr(failed, 'message', failed)}"
        if getattr(await fs.exists(_call(path=src)), "exists", True):
            return f"{src} still exists after its rename"
    for path, content in ((f"{root}/new.txt", "moved"), (f"{root}/moved-dir/inner.txt", "inside")):
        read, problem = await _read(fs, path)
        if problem or read != content:
            return problem or f"{path} holds {_shown(read)} after the rename, not {content!r}"
    return None


async def stat_sizes(fs: Any, root: str) -> str | None:
    path = f"{root}/sized.txt"
    if problem := await _write(fs, path, MULTI_BYTE):
        return problem
    stat = await fs.stat(_call(path=path))
    if adapter_error(stat) is not None:
        return "stat of a written file failed"
    size = len(MULTI_BYTE.encode())
    if (stat.is_file, stat.is_directory, stat.size) != (True, False, size):
        return (f"stat said file={stat.is_file}, directory={stat.is_directory}, size={stat.size}; the file is "
                f"{size} bytes of UTF-8 ({len(MULTI_BYTE)} characters)")
    return None


ROWS = (
    ContractRow("write and read", "what is written is read back", round_trip("session.start\n")),
    ContractRow("empty file", "an empty file reads back empty", round_trip("")),
    ContractRow("large file", f"{LARGE_CHARACTERS:,} characters read back whole (a large tool output)",
                round_trip("x" * (LARGE_CHARACTERS - 1) + "\n")),
    ContractRow("multi-byte UTF-8", "two-, three- and four-byte characters read back as written",
                round_trip(MULTI_BYTE)),
    ContractRow("overwrite", "a write replaces the whole file", overwrite),
    ContractRow("append appends", "appends go after what is there, in order (the event log is appended)", appends),
    ContractRow("append creates", "an append to a new file creates it and its directories", append_creates),
    ContractRow("missing is ENOENT", "every op on a missing path raises what the SDK maps to ENOENT",
                missing_is_enoent),
    ContractRow("mkdir", "recursive makes the parents; without it, a missing parent is an error", mkdir),
    ContractRow("readdir", "readdir and readdir_with_types list the same names, with their types", listing),
    ContractRow("rm", "rm removes a file, a tree when recursive; force ignores a missing path", removal),
    ContractRow("rename", "files and directories move whole; the old path is gone", renaming),
    ContractRow("stat", "a file's size is its bytes of UTF-8; files and directories tell apart", stat_sizes),
)
