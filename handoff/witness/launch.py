"""Start the witness model as a tracked child process and learn its URL.

The witness runs in its own process (``python -m handoff.witness``), as a real model
service would: the runtime reaches it over HTTP and nothing in the caller's memory can
leak into an answer. It prints ``Listening: http://HOST:PORT`` once it accepts
connections; waiting for exactly that line means no port is guessed and no request is
sent too early. Used by `handoff run` and `handoff lab`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from handoff.processes import ProcessTracker

START_TIMEOUT = 15.0
LISTENING = "Listening: "


class WitnessStartError(Exception):
    """The witness did not come up; the message says what it printed instead."""


async def start_witness(tracker: ProcessTracker, stderr_path: Path, *arguments: str, host: str = "127.0.0.1",
                        env: dict[str, str] | None = None) -> str:
    """Start the witness under ``tracker`` (so it is killed with everything else) and
    return its base URL, e.g. ``http://127.0.0.1:40123``. Its stderr goes to a file: a
    pipe nobody reads could fill up and stall it."""
    with stderr_path.open("wb") as stderr:
        process = await tracker.spawn(
            sys.executable, "-m", "handoff.witness", "--host", host, "--port", "0", *arguments,
            stdout=asyncio.subprocess.PIPE, stderr=stderr, env=env,
        )
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT)).decode().strip()
    except asyncio.TimeoutError:
        line = ""
    if not line.startswith(LISTENING + "http://"):
        tracker.kill_tree(process.pid)
        said = stderr_path.read_text(errors="replace").strip().splitlines()
        raise WitnessStartError(f"the witness model did not start (said {line or (said[-1] if said else 'nothing')!r})")
    return line.removeprefix(LISTENING)
