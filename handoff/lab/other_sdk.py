"""`handoff lab --sdk VERSION`: the lab's process on another Python SDK, with the runtime
that SDK pins.

The SDK is imported in one place (handoff/worker/sdk.py) of whichever interpreter runs the
lab, and another SDK lives in a virtual environment of its own (``.state/sdks/V``, made by
`make runtimes`). So the lab's process runs there, as ``python -m handoff.lab.child``,
with the runtime its SDK pins (``COPILOT_CLI_PATH``, as an app following the lab gets it);
this process passes it the options, shows its transcript as it comes, and keeps its run
as its own. The child is this process's to stop: a signal here stops it first.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable

import msgspec

from handoff import versions
from handoff.errors import UserError
from handoff.lab.options import LabFailure, LabOptions, Write
from handoff.processes import StopOnce
from handoff.runs.record import RunRecord, decode

CHILD_MODULE = "handoff.lab.child"
STOP_SECONDS = 60.0  # the child's own cleanup (the witness, the runtime) after it was told to stop


class Outcome(msgspec.Struct, frozen=True):
    """How the child's lab ended: its exit code, and the one-line error of a 2 or a 3."""
    code: int
    error: str | None = None


class Request(msgspec.Struct, frozen=True):
    """What the child is given on its stdin: the options, where to keep its run's record
    and its outcome, and where the stored lab runs are (the resume's --show-calls)."""
    options: bytes
    record: str
    outcome: str
    runs_dir: str


def encode_options(options: LabOptions) -> bytes:
    return msgspec.json.encode(options, enc_hook=str)


def decode_options(data: bytes) -> LabOptions:
    return msgspec.json.decode(data, type=LabOptions, dec_hook=lambda kind, value: kind(value))


def lab_process(version: str) -> tuple[list[str], dict[str, str], str]:
    """The child's command, its environment, and the runtime version it runs; UserError
    (exit 2) when the SDK or its runtime is not there."""
    try:
        sdk = versions.sdk(version)
        if sdk.python is None:
            raise versions.NotAvailable("it is the project's own SDK: leave --sdk out")
        pinned = versions.sdk_pinned_runtime(version)
        if pinned is None:
            raise versions.NotAvailable(f"SDK {version} names no runtime it pins (copilot/_cli_version.py)")
        runtime = versions.runtime(pinned)
    except versions.NotAvailable as missing:
        raise UserError(f"--sdk {version}: {missing}") from None
    env = {**os.environ, "PYTHONPATH": str(versions.PROJECT_ROOT), "COPILOT_CLI_PATH": str(runtime.executable)}
    if runtime.cache is not None:
        env["XDG_CACHE_HOME"] = str(runtime.cache)
    return [str(sdk.python), "-m", CHILD_MODULE], env, pinned


def run_lab_on(version: str, options: LabOptions, write: Write, warn: Write, runs_dir: Path,
               keep: Callable[[RunRecord], None]) -> int:
    """Run the lab in SDK ``version``'s interpreter: its exit code, 0 or 1, as run_lab's;
    UserError, LabFailure or KeyboardInterrupt as the child's lab ended."""
    options.check()
    command, env, runtime = lab_process(version)
    warn(f"On SDK {version} with runtime {runtime}, the pair that SDK pins (.state/sdks/{version}).")
    with tempfile.TemporaryDirectory(prefix="handoff-lab-sdk-") as folder:
        request = Request(encode_options(options), str(Path(folder) / "record.json"),
                          str(Path(folder) / "outcome.json"), str(runs_dir))
        with StopOnce() as stop:
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, text=True)
            try:
                child.stdin.write(msgspec.json.encode(request).decode() + "\n")
                child.stdin.close()
                relayed = threading.Thread(target=_relay, args=(child.stderr, warn), daemon=True)
                relayed.start()
                _relay(child.stdout, write)
                child.wait()
                relayed.join()
            finally:
                with stop.shielded():
                    _stopped(child)
        record = Path(request.record)
        if record.is_file():
            keep(decode(record.read_bytes()))
        return _ended(child.returncode, Path(request.outcome))


def _relay(stream, write: Write) -> None:
    for line in stream:
        write(line.rstrip("\n"))


def _stopped(child: subprocess.Popen) -> None:
    """The child ended: told to stop (its own cleanup) if it has not, killed if that hangs."""
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _ended(returncode: int, outcome: Path) -> int:
    try:
        ended = msgspec.json.decode(outcome.read_bytes(), type=Outcome)
    except (OSError, msgspec.DecodeError):
        raise LabFailure(f"the lab's process on the other SDK ended without an outcome (exit {returncode})") from None
    if ended.code == 2:
        raise UserError(ended.error or "bad input")
    if ended.code == 3:
        raise LabFailure(ended.error or "the lab could not complete")
    if ended.code == 130:
        raise KeyboardInterrupt
    return ended.code
