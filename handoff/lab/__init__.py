"""`handoff lab`: Lab 05 ("sessions") as the lab prints it, on the real runtime.

Why it exists next to `handoff run`: the lab's transcript is what a learner reads first
and compares against. This command prints that transcript in the same shape, from the
same prompts (:mod:`handoff.fact`) and the same SDK calls — ``create_session`` with an
id, close, ``resume_session`` by id, ``get_session_metadata``, ``list_sessions`` — and
runs the lab's exercises: the resume from a second process (``--resume ID``), a stable
id, a third turn, resuming the most recent session. The model is the witness by default,
so the answer can only name the fact if the runtime really sent turn 1 along.

Every SDK call goes through :class:`handoff.worker.sdk.Runtime` (the only module that
imports the SDK). The witness is a tracked child process and the runtime is the SDK's
child; both are gone when :func:`run_lab` returns or raises, also on Ctrl-C and SIGTERM.

Exit codes (returned, or carried by the exceptions): 0 the transcript completed and every
resumed answer named the fact; 1 it completed but a resumed answer did not (the context
did not survive); 2 bad input or configuration (:class:`UserError`: options, an unknown
session id, no stored session, no token, a refused key, an unreachable endpoint);
3 something else failed (:class:`LabFailure`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, Callable

import psutil

from handoff.backends import explain
from handoff.errors import UserError
from handoff.eventlog import events_path
from handoff.fact import Fact
from handoff.guard.ids import secret_shape, shown
from handoff.lab.answers import why_not_named
from handoff.lab.calls import Calls, Creator
from handoff.processes import ProcessTracker
from handoff.protocol import OPENAI_COMPATIBLE, Backend
from handoff.runs.record import RunRecord
from handoff.runtime_locator import PROJECT_ROOT, locate_runtime
from handoff.session_ids import RULE as SAFE_ID_RULE, new_session_id, safe_id
from handoff.witness.evidence import read_evidence
from handoff.witness.launch import WitnessStartError, start_witness
from handoff.witness.tags import TAG_HEADERS, request_tags
from handoff.words import Action, HostKind, TurnKind

DEFAULT_HOME = PROJECT_ROOT / ".state" / "lab-home"
LOG_DIR = "handoff-lab"  # inside the home: the SDK's log and the witness's stderr
STOP_TIMEOUT = 15.0
# An id names a directory (session-state/<id>/): keep it to characters that are safe there.

Write = Callable[[str], None]


class LabFailure(Exception):
    """The lab could not complete for a reason that is not the user's input (exit 3)."""


def new_lab_session_id() -> str:
    """The lab's own recipe: a readable prefix and random hex, cut to 24 characters."""
    return new_session_id("sdklabs")



@dataclass(frozen=True)
class LabOptions:
    backend: Backend
    fact: Fact
    home: Path = DEFAULT_HOME
    session_id: str | None = None  # --session-id: a stable id instead of a random one
    resume: str | None = None  # --resume ID: only turn 2, typically in a second process
    resume_most_recent: bool = False  # only turn 2, on the newest stored session
    third_turn: bool = False  # the lab's exercise: resume again after the metadata
    show_calls: bool = False  # beside each turn, the SDK call that made it and the process that called

    def check(self) -> None:
        """Reject contradictory or malformed options before anything starts."""
        chosen = [name for name, given in (("--resume", self.resume), ("--session-id", self.session_id),
                                           ("--resume-most-recent", self.resume_most_recent)) if given]
        if len(chosen) > 1:
            raise UserError(f"{' and '.join(chosen)} choose the session in different ways: give only one")
        if not self.fact.value.strip() or not self.fact.topic.strip():
            raise UserError("--fact and --topic must not be empty")
        for option, value in (("--resume", self.resume), ("--session-id", self.session_id)):
            if value is not None and not safe_id(value):  # not echoed: it may be a secret
                raise UserError(f"{option}: an id is {SAFE_ID_RULE} (it names a directory in the home)")
        if self.home.exists() and not self.home.is_dir():
            raise UserError(f"--home {self.home}: exists and is not a directory")


def run_lab(options: LabOptions, write: Write, warn: Write, keep: Callable[[RunRecord], None] | None = None,
            creator: Callable[[str], Creator | None] = lambda session_id: None) -> int:
    """Run the lab, writing the transcript line by line; returns 0 or 1 (see module doc).
    Nothing it started is left running when it returns or raises. ``keep`` is given the
    run's record (handoff/lab/recorder.py) once the runtime has started, however the lab
    ends. ``creator`` finds the stored lab run that created a session (for --show-calls)."""
    options.check()
    # Absolute, so the runtime (which gets it as COPILOT_HOME) and messages agree on it.
    options = replace(options, home=options.home.expanduser().absolute())
    runtime_path = locate_runtime()
    try:
        (options.home / LOG_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"--home {options.home}: cannot create it ({error.strerror})") from None
    before = _descendants()
    tracker = ProcessTracker()
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C does
    lab = _Lab(options, str(runtime_path), tracker, write, warn)
    lab.creator = creator
    try:
        with _sdk_log_to(options.home / LOG_DIR / "sdk.log"):
            return asyncio.run(lab.run())
    finally:
        tracker.stop_all()
        _kill_new_descendants(before)  # the SDK's runtime, should its stop have failed
        signal.signal(signal.SIGTERM, previous)
        if keep is not None and lab.recorder is not None and lab.recorder.lines:
            keep(lab.recorder.record(read_evidence(lab.evidence_path)))
        lab.evidence_path.unlink(missing_ok=True)


class _Lab:
    def __init__(self, options: LabOptions, runtime_path: str, tracker: ProcessTracker, write: Write, warn: Write):
        self.options = options
        self.backend = options.backend
        self.runtime_path = runtime_path
        self.tracker = tracker
        self.write = write
        self.warn = warn
        self.runtime: Any = None
        self.recorder: Any = None  # a Recorder once the SDK is loaded
        self.evidence_path = options.home / LOG_DIR / f"witness-evidence-{os.getpid()}.jsonl"
        self.calls = Calls(options.backend)
        self.creator: Callable[[str], Creator | None] = lambda session_id: None

    def say(self, *lines: str) -> None:
        for line in lines:
            self.write(line)

    async def run(self) -> int:
        from handoff.lab.recorder import (  # the SDK loads only when a lab really runs
            STEP,
            Recorder,
        )
        from handoff.worker.model import model_source
        from handoff.worker.sdk import Runtime

        options = self.options
        self.recorder = Recorder(str(options.home), options.fact, self.backend,
                                 resuming=bool(options.resume or options.resume_most_recent))
        try:
            witness_url = None
            if self.backend.seen_on_the_wire:
                # The witness answers, or (openai-compatible) relays to the endpoint: either
                # way it records whether each request carried turn 1's fact.
                relay = ["--relay-to", self.backend.provider_url] if self.backend.kind == OPENAI_COMPATIBLE else []
                witness_url = await start_witness(self.tracker, options.home / LOG_DIR / "witness.stderr",
                                                  "--evidence", str(self.evidence_path), *relay)
            tags = request_tags(self.recorder.run_id, STEP, HostKind.LOCAL, options.fact)
            source = model_source(self.backend, witness_url, tags)
            self.calls = Calls(self.backend, getattr(source, "base_url", None))
            self.runtime = Runtime(self.runtime_path, str(options.home), source)
            started = time.monotonic()
            version = await self._sdk("start the runtime", self.runtime.start())
            self.recorder.ready(version, _ms(started))
            code = await self._transcript()
            self.recorder.finish(ok=code == 0)
            return code
        except WitnessStartError as error:
            raise LabFailure(str(error)) from None
        finally:
            if self.runtime is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.runtime.stop(), STOP_TIMEOUT)
            await self.tracker.shutdown()

    async def _transcript(self) -> int:
        options = self.options
        header = ["== Lab 05: sessions ==", "", f"Model: {self.backend.model}"]
        if options.resume or options.resume_most_recent:
            # Only turn 2. The header waits for the resume, so a bad id prints just the error.
            if options.resume_most_recent:
                session_id, stored = await self._most_recent()
                header.append(f"Stored sessions: {stored} (list_sessions); resuming the most recent")
            else:
                session_id = options.resume
            self.recorder.session_id = session_id
            session = await self._sdk(f"resume {shown(session_id)}", self.runtime.resume(session_id), Action.RESUME)
            self.say(*header, f"Session id: {shown(session_id)}", "", "--- Turn 2 (resumed session) ---")
            # The calls were made before the header (a bad id prints only the error); shown here.
            self._show(*([self.calls.list()] if options.resume_most_recent else []),
                       self.calls.created_by(self.creator(shown(session_id))), self.calls.resume(session_id))
            recalled = await self._ask_and_close(session, turn=2, told_here=False)
        else:
            session_id = options.session_id or new_lab_session_id()
            self.say(*header, f"Session id: {shown(session_id)}")
            if secret_shape(session_id):
                self.warn(f"warning: the --session-id given {secret_shape(session_id)}; the runtime writes ids into "
                          f"file names, logs and indexes, so it is now stored under {self.options.home}. Give a "
                          f"session an opaque id instead (see README, 'Security model').")
            if options.session_id and await self._sdk("get_session_metadata", self.runtime.metadata(session_id),
                                                      shown=self.calls.metadata(session_id)):
                self.say("Note: this id is already stored here; create_session does not continue it "
                         "(only resume_session does; see README, 'A finding that corrects the lab').")
            self.say("", "--- Turn 1 (new session) ---")
            self.recorder.session_id = session_id
            session = await self._sdk("create_session", self.runtime.create(session_id), Action.CREATE,
                                      shown=self.calls.create(session_id))
            await self._turn(session, TurnKind.TELL, turn=1)
            await self._sdk("close the session", self.runtime.close(session), Action.CLOSE, shown=self.calls.close())
            self.say("", "Session closed.", "", "--- Turn 2 (resumed session) ---")
            session = await self._sdk(f"resume {shown(session_id)}", self.runtime.resume(session_id), Action.RESUME,
                                      shown=self.calls.resume(session_id))
            recalled = await self._ask_and_close(session, turn=2, told_here=True)
        self.say("", "--- Session metadata ---")
        found = await self._sdk("get_session_metadata", self.runtime.metadata(session_id), Action.METADATA,
                                lambda found: {"found": found is not None}, shown=self.calls.metadata(session_id))
        self.say("  (no metadata returned)" if found is None else f"  id={shown(session_id)} metadata retrieved")
        if options.third_turn:
            self.say("", "--- Turn 3 (resumed again, after metadata) ---")
            session = await self._sdk(f"resume {shown(session_id)}", self.runtime.resume(session_id), Action.RESUME,
                                      shown=self.calls.resume(session_id))
            told_here = not (options.resume or options.resume_most_recent)
            recalled = await self._ask_and_close(session, turn=3, told_here=told_here) and recalled
        return 0 if recalled else 1

    async def _most_recent(self) -> tuple[str, int]:
        stored = await self._sdk("list_sessions", self.runtime.list(), Action.LIST,
                                 lambda stored: {"listed": tuple(s.session_id for s in stored)})
        if not stored:
            raise UserError(f"no stored sessions in {self.options.home} to resume: "
                            f"run `handoff lab` first, with the same --home")
        return max(stored, key=lambda s: s.modified).session_id, len(stored)

    async def _ask_and_close(self, session: Any, turn: int, told_here: bool) -> bool:
        answer = await self._turn(session, TurnKind.ASK, turn)
        await self._sdk("close the session", self.runtime.close(session), Action.CLOSE, shown=self.calls.close())
        if self.options.fact.is_in(answer):
            return True
        log = events_path(self.options.home, self.recorder.session_id)
        self.warn(why_not_named(turn, answer, self.options.fact, log.read_bytes() if log.is_file() else None, told_here))
        return False

    async def _turn(self, session: Any, kind: TurnKind, turn: int) -> str | None:
        fact = self.options.fact
        prompt = fact.remember_prompt if kind == TurnKind.TELL else fact.question_prompt
        self.say(f"You: {prompt}")
        headers = {TAG_HEADERS["turn"]: str(self.recorder.next_turn())} if self.backend.seen_on_the_wire else {}
        started = time.monotonic()
        answer = await self._sdk(f"turn {turn}", self.runtime.send(session, prompt, headers), failed_as=kind,
                                 shown=self.calls.send())
        self.recorder.turn(kind, prompt, answer, _ms(started))
        self.say(f"Assistant: {answer if answer is not None else '(no reply)'}")
        return answer

    def _show(self, *lines: str) -> None:
        if self.options.show_calls:
            self.say(*lines)

    async def _sdk(self, what: str, call: Awaitable[Any], action: str | None = None,
                   detail: Callable[[Any], dict] | None = None, failed_as: str | None = None, shown: str = "") -> Any:
        """One SDK call, printed first with --show-calls (``shown``); see _Caller."""
        if shown:
            self._show(shown)
        return await _Caller(self.options, self.recorder)(what, call, action, detail, failed_as)


@dataclass(frozen=True)
class _Caller:
    """Awaits one SDK call for the lab: records it, and turns what it raises into a
    one-line error that says what failed and, when it is the user's to fix, how."""

    options: LabOptions
    recorder: Any  # the run's Recorder, or None before the SDK is loaded

    async def __call__(self, what: str, call: Awaitable[Any], action: str | None = None,
                       detail: Callable[[Any], dict] | None = None, failed_as: str | None = None) -> Any:
        """Await ``call``, recording it as ``action`` (a failure as ``failed_as`` or
        ``action``); raise UserError (exit 2) or LabFailure (exit 3) when it fails."""
        started = time.monotonic()
        try:
            result = await call
        except (asyncio.TimeoutError, TimeoutError):
            message = "the model did not answer in time"
            self._record_failure(action or failed_as, message, started)
            raise LabFailure(f"{what}: {message}") from None
        except Exception as error:  # the SDK raises plain Exception for a failed turn
            message = self._unechoed(self.options.backend.scrub(runtime_message(error)))
            self._record_failure(action or failed_as, message, started)
        else:
            if action:
                self.recorder.action(action, _ms(started), **(detail(result) if detail else {}))
            return result
        missing = re.search(r"Session not found\S*( \S+)?", message)
        if missing:
            raise UserError(f"{missing.group(0)} (no session with this id is stored in {self.options.home}; "
                            f"start one with `handoff lab`, using the same --home)")
        explained = explain(self.options.backend, message)
        if explained:
            raise UserError(f"{what}: {explained}")
        raise LabFailure(f"{what}: {message}")

    def _unechoed(self, message: str) -> str:
        """The runtime's message without a secret-shaped id the user gave (the runtime
        repeats ids in its errors)."""
        for given in filter(None, (self.options.session_id, self.options.resume)):
            message = message.replace(given, shown(given))
        return message

    def _record_failure(self, action: str | None, message: str, started: float) -> None:
        if action and self.recorder is not None:
            self.recorder.failed(action, message, _ms(started))


def _ms(since: float) -> int:
    return round((time.monotonic() - since) * 1000)


def runtime_message(error: BaseException) -> str:
    """The runtime's own words, on one line, without the JSON-RPC and SDK wrapping."""
    text = " ".join(str(error).split()) or type(error).__name__
    text = re.sub(r"^JSON-RPC Error -?\d+: (Request \S+ failed with message: )?", "", text)
    text = text.removeprefix("Session error: ")
    # The runtime's advice names its own variables (COPILOT_PROVIDER_API_KEY, ...), which
    # this tool does not use; the caller supplies advice about its own options instead.
    text = re.sub(r"\s*Check your COPILOT_PROVIDER_\S.*$", "", text)
    return text[:400]


def _interrupt(*_: Any) -> None:
    raise KeyboardInterrupt


# The SDK logs a failed request with its traceback ("copilot"), and after an interrupt its
# reader thread may still hand a response to a future the cancelled call gave up on, which
# asyncio reports as "Exception in callback ... InvalidStateError" ("asyncio").
QUIETED_LOGGERS = ("copilot", "asyncio")


@contextlib.contextmanager
def _sdk_log_to(path: Path):
    """Send the SDK's and asyncio's records to a file in the home: on a terminal their
    tracebacks would bury the one-line error the user is meant to read."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    saved = {}
    for name in QUIETED_LOGGERS:
        logger = logging.getLogger(name)
        saved[name] = logger.propagate
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield
    finally:
        for name, propagate in saved.items():
            logging.getLogger(name).removeHandler(handler)
            logging.getLogger(name).propagate = propagate
        handler.close()


def _descendants() -> set[int]:
    with contextlib.suppress(psutil.Error):
        return {child.pid for child in psutil.Process().children(recursive=True)}
    return set()


def _kill_new_descendants(before: set[int]) -> None:
    """Kill any process below this one that the lab started and that is still running."""
    with contextlib.suppress(psutil.Error):
        left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        for process in left:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(left, timeout=5)
