"""``python -m handoff.worker``: read a WorkerSpec (JSON) on stdin, do it, report events.
``python -m handoff.worker --spec FILE`` reads it from that file instead (a cluster's pod,
which has it mounted from a Secret and no coordinator on its stdin).

Standard output carries only protocol events (handoff/protocol.py), one per line:
anything else that writes to stdout (a library, a stray print) is sent to stderr instead,
so the coordinator's reader never sees noise. Whatever happens, the worker exits 0 after
a ``finished`` line or, when even the spec could not be read, after an ``error`` line; it
never shows a traceback to its parent as its result. (Workers on this machine are usually
forked from the zygote, handoff/hosts/zygote.py, which calls the same :func:`main`.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import sys
import time
import traceback
from typing import Any, Callable, Sequence

from handoff.protocol import SPEC_OPTION, ActionFailed, Cpu, Finished, WorkerSpec, encode
from handoff.worker import lifeline
from handoff.words import WorkerStage


def _event_writer():
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout = sys.stderr

    def emit(event) -> None:
        channel.write(encode(event))

    return emit


def cpu_seconds() -> Cpu:
    """CPU time (user + system) this worker spent itself and in the processes it started
    and reaped: its runtime, with whatever commands the runtime ran. A forked worker's
    own count starts at the fork; a spawned one's includes its interpreter start."""
    def total(usage) -> float:
        return round(usage.ru_utime + usage.ru_stime, 3)

    return Cpu(worker=total(resource.getrusage(resource.RUSAGE_SELF)),
               runtime=total(resource.getrusage(resource.RUSAGE_CHILDREN)))


def _spec_text(arguments: list[str]) -> bytes:
    """The spec: the whole of the file ``--spec FILE`` names, else stdin's first line."""
    if len(arguments) == 2 and arguments[0] == SPEC_OPTION:
        with open(arguments[1], "rb") as file:
            return file.read()
    if arguments:
        raise ValueError(f"unknown arguments {' '.join(arguments)!r}: give none (the spec on stdin) or {SPEC_OPTION} FILE")
    return first_line()


def first_line() -> bytes:
    """The first line of stdin, read without buffering past it: the lines after it are
    the coordinator's releases, read later by the interpreter."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(0, 1)
        if not chunk:
            break
        data += chunk
    return data


def main(interpreter: Callable[[WorkerSpec, Callable[[Any], None]], Any] | None = None,
         arguments: Sequence[str] = ()) -> int:
    """``interpreter``: what does the spec's actions (the SDK's, by default; a browser's
    for a step in the chat's page, handoff/chat/worker.py). ``arguments``: the command
    line's (a forked worker has none of its own)."""
    lifeline.hold()  # in a container: end with the run that started it (a no-op elsewhere)
    emit = _event_writer()
    try:
        spec = WorkerSpec.from_json(_spec_text(list(arguments)))
    except Exception as error:
        where = " ".join(arguments) or "stdin"
        emit(ActionFailed(t=time.time(), action=WorkerStage.READ_SPEC,
                          message=f"cannot read the worker spec from {where}: {error}"))
        return 0
    try:
        if interpreter is None:
            from handoff.worker.interpreter import Interpreter as interpreter  # the SDK loads here

        ok = asyncio.run(interpreter(spec, emit).run())
        emit(Finished(t=time.time(), ok=ok, cpu_s=cpu_seconds()))
    except Exception as error:
        # The event goes first: stdout is a pipe, and the coordinator must hear the worker's
        # last words even when its log file cannot be written (a full disk).
        message = " ".join(str(error).split()) or type(error).__name__
        emit(ActionFailed(t=time.time(), action="worker", message=_without_secrets(message, spec)[:400]))
        emit(Finished(t=time.time(), ok=False))
        with contextlib.suppress(OSError):  # the traceback, for whoever debugs it
            print(_without_secrets(traceback.format_exc(), spec), file=sys.stderr)
    return 0


def _without_secrets(text: str, spec: WorkerSpec) -> str:
    """``text`` with the backend's key or token, if it appears, replaced by ***: the values
    the spec carries, then those in this process's environment."""
    for value in filter(None, spec.secrets.values()):
        text = text.replace(value, "***")
    return spec.backend.scrub(text)


def run_and_exit(interpreter: Callable[[WorkerSpec, Callable[[Any], None]], Any] | None = None,
                 arguments: Sequence[str] = ()) -> None:
    code = main(interpreter, arguments)
    # Everything is reported and the runtime is stopped: skip the interpreter's teardown
    # of the SDK's modules, which takes ~0.1 s of CPU for nothing.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run_and_exit(arguments=sys.argv[1:])
