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
# The lab's three resume_session call forms, each "valid" by its text: (as the lab writes
# it, the keyword arguments after the id).
RESUME_FORMS = (
    ("resume_session(session_id)", {}),
    ('resume_session(session_id, model="gpt-5")', {"model": "gpt-5"}),
    ("resume_session(session_id, streaming=False)", {"streaming": False}),
)


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
        self.listed: list[str] = []  # the models list_models offered (the Copilot API's path)

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
                listed = self.listed = await self._sdk("list_models", self.runtime.models())
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
        if options.resume_forms:
            recalled = await self._resume_forms(session_id) and recalled
        return 0 if recalled else 1

    async def _resume_forms(self, session_id: str) -> bool:
        """Each of the lab's resume_session forms as it writes it: resumed, asked, closed;
        what each did, from the run: the answer, the model the request asked for, or the
        SDK's or the runtime's refusal. True when each answer named the fact."""
        told_here = not (self.options.resume or self.options.resume_most_recent)
        recalled = True
        for written, arguments in RESUME_FORMS:
            self.say("", f"--- {written} ---")
            try:
                session = await self._sdk(written, self.runtime.resume_as_written(session_id, **arguments),
                                          Action.RESUME)
            except (UserError, LabFailure) as refused:
                self.say(f"  refused: {refused}")
                recalled = False
                continue
            turn = self.recorder.turns + 1
            recalled = await self._ask_and_close(session, turn=turn, told_here=told_here) and recalled
            self.say(*(f"  {line}" for line in self._asked_for(turn, arguments.get("model"))))
        return recalled

    def _asked_for(self, turn: int, named: str | None) -> tuple[str, ...]:
        """Which model the turn's request asked for, as the witness received it, against
        the one the form named (``named``) and the one the session was created with."""
        from handoff.witness.evidence import read_evidence

        seen = read_evidence(self.evidence_path) if self.evidence_path.is_file() else []
        asked = next((e.model for e in reversed(seen) if e.turn == str(turn)), None)
        if asked is None:
            return ("what the request asked for was not seen (the witness records it, the service does not)",)
        created = self.backend.model
        whose = ", the one the session was created with" if asked == created else ""
        if named is None and asked == created:
            return (f"the request asked for model {asked}{whose}",)
        if named is None:
            return (f"the request asked for model {asked}, not the one the session was created with ({created}):",
                    "the model an earlier resume named stayed with the session")
        if named == asked:
            return (f"the request asked for model {asked}, as the form named it",)
        unlisted = f", which the service does not list ({', '.join(self.listed)})" if named not in self.listed else ""
        return (f"the form named model {named}{unlisted};", f"the request asked for {asked}{whose}, and nothing said so")

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
