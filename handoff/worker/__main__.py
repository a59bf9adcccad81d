"""``python -m handoff.worker``: read a WorkerSpec (JSON) on stdin, do it, report JSON lines.

Standard output carries only the event lines: anything else that writes to stdout
(a library, a stray print) is sent to stderr instead, so the coordinator's parser never
sees noise. Whatever happens, the worker exits 0 after a ``finished`` line or, when even
the spec could not be read, after an ``error`` line; it never shows a traceback to its
parent as its result. (Workers on this machine are usually forked from
:mod:`handoff.worker.zygote`, which calls the same :func:`main`.)
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
import traceback


def _event_writer():
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1, encoding="utf-8")
    sys.stdout = sys.stderr

    def emit(event: str, **fields) -> None:
        channel.write(json.dumps({"event": event, "t": time.time(), **fields}, ensure_ascii=False) + "\n")
        channel.flush()

    return emit


def cpu_seconds() -> dict[str, float]:
    """CPU time (user + system) this worker spent itself and in the processes it started
    and reaped: its runtime, with whatever commands the runtime ran. A forked worker's
    own count starts at the fork; a spawned one's includes its interpreter start."""
    def total(usage) -> float:
        return round(usage.ru_utime + usage.ru_stime, 3)

    return {"worker": total(resource.getrusage(resource.RUSAGE_SELF)),
            "runtime": total(resource.getrusage(resource.RUSAGE_CHILDREN))}


def main() -> int:
    emit = _event_writer()
    try:
        from handoff.worker.spec import WorkerSpec

        spec = WorkerSpec.from_json(sys.stdin.read())
    except Exception as error:
        emit("error", action="read-spec", message=f"cannot read the worker spec from stdin: {error}")
        return 0
    try:
        from handoff.worker.run import Step

        ok = asyncio.run(Step(spec, emit).run())
        emit("finished", ok=ok, cpu_s=cpu_seconds())
    except Exception as error:
        # The traceback goes to stderr, kept in the worker's log for whoever debugs it.
        print(_without_secrets(traceback.format_exc(), spec), file=sys.stderr)
        message = " ".join(str(error).split()) or type(error).__name__
        emit("error", action="worker", message=_without_secrets(message, spec)[:400])
        emit("finished", ok=False)
    return 0


def _without_secrets(text: str, spec) -> str:
    """``text`` with the backend's key or token, if it appears, replaced by ***: the values
    the spec carries, then those in this process's environment."""
    from handoff.backends import Backend

    for value in filter(None, spec.secrets.values()):
        text = text.replace(value, "***")
    return Backend(spec.backend, spec.model, api_key_env=spec.api_key_env, token_env=spec.token_env).scrub(text)


if __name__ == "__main__":
    code = main()
    # Everything is reported and the runtime is stopped: skip the interpreter's teardown
    # of the SDK's modules, which takes ~0.1 s of CPU for nothing.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
