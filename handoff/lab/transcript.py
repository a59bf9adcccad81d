"""The lab's transcript, step by step: the runtime started, turn 1 told, the session
closed and resumed, turn 2 asked, the metadata, and the lab's exercises (``--resume``,
``--resume-most-recent``, ``--third-turn``), each printed as the lab prints it and
recorded as a step of a run (recorder.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any, Awaitable, Callable

import msgspec

from handoff.errors import UserError
from handoff.eventlog import events_path
from handoff.guard.ids import secret_shape, shown
from handoff.hosts.local import app_runtime_environment
from handoff.lab.answers import why_not_named
from handoff.lab.caller import Caller, ms
from handoff.lab.calls import Calls, Creator
from handoff.lab.copilot_path import Tokens, pick_model
from handoff.lab.options import LOG_DIR, LabFailure, LabOptions, Write, new_lab_session_id
from handoff.processes import ProcessTracker
from handoff.protocol import OPENAI_COMPATIBLE, WITNESS_COPILOT_API
from handoff.witness.launch import WitnessStartError, start_witness
from handoff.witness.tags import TAG_HEADERS, request_tags
from handoff.words import Action, HostKind, TurnKind

STOP_TIMEOUT = 15.0


class Lab:
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
        from handoff.worker.sdk import Runtime, SessionOptions

        options = self.options
        self.recorder = Recorder(str(options.home), options.fact, self.backend,
                                 resuming=bool(options.resume or options.resume_most_recent))
        try:
            witness_url = None
            on_the_api = self.backend.kind == WITNESS_COPILOT_API
            tokens = Tokens() if on_the_api else None
            if self.backend.seen_on_the_wire:
                # The witness answers, or (openai-compatible) relays to the endpoint: either
                # way it records whether each request carried turn 1's fact.
                relay = ["--relay-to", self.backend.provider_url] if self.backend.kind == OPENAI_COMPATIBLE else []
                witness_url = await start_witness(self.tracker, options.home / LOG_DIR / "witness.stderr",
                                                  "--evidence", str(self.evidence_path), *relay,
                                                  env=tokens.witness_environment() if tokens else None)
            tags = request_tags(self.recorder.run_id, STEP, HostKind.LOCAL, options.fact)
            source = model_source(self.backend, witness_url, tags, token=tokens.mine if tokens else None)
            self.calls = Calls(self.backend, getattr(source, "base_url", None))
            # On the lab's path a resume is given no model (the session keeps its own).
            session_options = SessionOptions(model=None) if on_the_api else None
            self.runtime = Runtime(self.runtime_path, str(options.home), source, env=app_runtime_environment(),
                                   options=session_options)
            started = time.monotonic()
            version = await self._sdk("start the runtime", self.runtime.start())
            self.recorder.ready(version, ms(started))
            if on_the_api:
                listed = await self._sdk("list_models", self.runtime.models())
                self.backend = msgspec.structs.replace(self.backend, model=pick_model(listed, self.backend.model))
                self.recorder.backend = self.backend
                self.calls = Calls(self.backend)
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
                          f"session an opaque id instead (see docs/stores-and-security.md, 'Security model').")
            if options.session_id and await self._sdk("get_session_metadata", self.runtime.metadata(session_id),
                                                      shown=self.calls.metadata(session_id)):
                self.say("Note: this id is already stored here; create_session does not continue it "
                         "(only resume_session does; see docs/lab.md, 'A finding that corrects the lab').")
            self.say("", "--- Turn 1 (new session) ---")
            self.recorder.session_id = session_id
            session = await self._sdk("create_session", self.runtime.create(session_id, self.backend.model),
                                      Action.CREATE, shown=self.calls.create(session_id))
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
        self.recorder.turn(kind, prompt, answer, ms(started))
        self.say(f"Assistant: {answer if answer is not None else '(no reply)'}")
        return answer

    def _show(self, *lines: str) -> None:
        if self.options.show_calls:
            self.say(*lines)

    async def _sdk(self, what: str, call: Awaitable[Any], action: str | None = None,
                   detail: Callable[[Any], dict] | None = None, failed_as: str | None = None, shown: str = "") -> Any:
        """One SDK call, printed first with --show-calls (``shown``); see Caller."""
        if shown:
            self._show(shown)
        return await Caller(self.options, self.recorder)(what, call, action, detail, failed_as)
