"""What happened in one scenario, as the participants and messages of a sequence diagram.

Read from the stored record only, as its history (handoff/runs/history.py) — the workers'
events, the faults the step driver injected, the witness's records of each request —
never from live processes, so a stored run draws the same diagram every time. Where
things are on the page is diagram.py's job; this module says who talked to whom, in
which order, and with what.

The participants, left to right: the coordinator (which passes the session id along),
then for each step its worker process (pid and host) and that worker's own runtime, then
the stores the steps used, then the model. A request that reached the model is marked
with the fact when the witness saw the fact in it, and with the fact crossed out when it
did not: that mark is the evidence the verdict rests on.

A worker's calls are named as its SDK spells them: ``create_session`` on a Python
worker's arrows, ``createSession`` on a Node.js worker's. Where a scenario's workers ran
more than one SDK (or a step names one), every worker says which it ran.

Labels are whole: an id, a refusal's reason, an answer, an error are never cut short
(diagram.py wraps a long one onto several lines). Only a label longer than any the lab
makes (a hostile or broken record) is cut, at LABEL_CHARACTERS, its whole text kept as
its tooltip.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields

from handoff import versions
from handoff.protocol import (
    COPILOT,
    OPENAI_COMPATIBLE,
    WITNESS_COPILOT_API,
    ActionDone,
    ActionFailed,
    Backend,
    EventLog,
    Finished,
    Holding,
    Skipped,
    Turn,
)
from handoff.runs.history import ScenarioHistory, StepHistory
from handoff.runs.record import FaultRecord, ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Call, Evidence
from handoff.words import (
    RESUMING_ACTIONS,
    Action,
    AppSetting,
    BrowserKeeps,
    FactPlace,
    FaultPoint,
    HomeKind,
    HostKind,
    SdkLanguage,
    SettingValue,
    StepSession,
    StoreKind,
)

COORDINATOR = "coordinator"
MODEL = "model"
HEADER_CHARACTERS = 120  # of a lane header's title or detail line
LABEL_CHARACTERS = 1000  # a label longer than this is cut (no record the lab makes has one); its tooltip is whole
DEFAULT_PRINCIPAL = next(f.default for f in fields(Step) if f.name == "principal")
# Where a step's memory setting puts memories (AppSetting.MEMORY), and where a request
# carried the fact outside the session's history (FactPlace): both drawn where they happened.
# What a step's browser does in the chat, by what its page keeps (Step.keeps).
PAGES = {BrowserKeeps.SESSION_ID: "drives its page", BrowserKeeps.CONVERSATION: "keeps the whole chat"}
MEMORY_PLACES = {SettingValue.FIRST: "in the system prompt", SettingValue.SECOND: "in user messages"}
OUTSIDE_HISTORY = {FactPlace.SYSTEM: "in a system message", FactPlace.INJECTED: "in text the runtime added"}


@dataclass(frozen=True)
class SdkCalls:
    """The SDK's calls behind the tool's actions, as one SDK's language spells them."""

    language: str  # as a person names it
    create: str
    resume: str
    send: str
    close: str
    metadata: str
    listing: str
    given_id: str  # how a create passes the app's id, with {} for the id

    def version(self, sdk_version: str) -> str:
        return f"{self.language} SDK {sdk_version.removeprefix(versions.NODE_PREFIX)}"


CALLS = {
    SdkLanguage.PYTHON: SdkCalls("Python", "create_session", "resume_session", "send_and_wait", "disconnect",
                                 "get_session_metadata", "list_sessions", "session_id={}"),
    SdkLanguage.NODE: SdkCalls("Node.js", "createSession", "resumeSession", "sendAndWait", "disconnect",
                               "getSessionMetadata", "listSessions", "{{ sessionId: {} }}"),
}


def sdk_language(step: StepHistory, spec: Step) -> SdkLanguage:
    """The SDK the step's worker ran (its ``ready``), else the one the step names."""
    ready = step.said.ready
    if ready is not None and ready.sdk_language in CALLS:
        return SdkLanguage(ready.sdk_language)
    return SdkLanguage.NODE if versions.is_node(spec.sdk) else SdkLanguage.PYTHON


def _mixed(history: ScenarioHistory) -> bool:
    """Whether the scenario is about SDKs: a step names one, or its workers ran more than one."""
    steps = list(zip(history.steps, history.record.scenario.steps))
    return any(spec.sdk for _, spec in steps) or len({sdk_language(step, spec) for step, spec in steps}) > 1


@dataclass(frozen=True)
class Participant:
    key: str
    kind: str  # coordinator | worker | runtime | store | model
    title: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactMark:
    """The fact on a request: ``seen`` when the witness found it in what the model was sent.
    On any other message (a tool's result, a summary) it says whether that text carries the
    fact; the page tells the two apart (``data-fact`` on requests, ``data-carries`` else)."""

    value: str
    seen: bool
    records: int = 1  # how many of the witness's records of requests it stands for (a fill: all its turns)


@dataclass(frozen=True)
class Message:
    source: str
    target: str  # the same as source: a note on that participant's lifeline
    label: str
    kind: str  # call | reply | write | load | request | answer | id | fault | refusal | error | note
    step: str = ""
    fact: FactMark | None = None
    full: str = ""  # the whole text when the label is cut

    @property
    def is_note(self) -> bool:
        return self.source == self.target


@dataclass(frozen=True)
class Sequence:
    participants: tuple[Participant, ...]
    messages: tuple[Message, ...]

    def index(self, key: str) -> int:
        return next(i for i, p in enumerate(self.participants) if p.key == key)


def cut(text: str, limit: int = LABEL_CHARACTERS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_id(session_id: str | None) -> str:
    """An id as a label shows it: whole (the diagram wraps it if it must)."""
    return session_id or "—"


def acting_as(spec: Step, scenario: Scenario) -> str:
    """Who a worker acts as. The raw SDK checks no principal: a raw step names one only
    where its scenario has several (bob on the raw path, say), else it has none."""
    if spec.guarded:
        return f"{spec.principal}, guarded"
    if any(step.principal != DEFAULT_PRINCIPAL for step in scenario.steps):
        return f"{spec.principal}, raw SDK"
    return "raw SDK, no principal"


def store_keys(record: ScenarioRecord) -> list[str]:
    """The store each step of a scenario used, step by step, in one pass."""
    keys: list[str] = []
    last_on: dict[str, str] = {}  # host → the store its latest step used
    for step in record.steps:
        if step.store != StoreKind.HOME:
            key = f"store:{step.store}"
        elif step.home == HomeKind.RESTARTED and step.host in last_on:
            key = last_on[step.host]  # a restarted container keeps its home: the one of the host's step before
        elif step.home == HomeKind.SHARED:
            key = "store:shared"
        else:
            key = f"store:{step.home}:{step.step}"
        last_on[step.host] = key
        keys.append(key)
    return keys


def on_container(step: StepRecord, record: ScenarioRecord) -> bool:
    return record.scenario.hosts.get(step.host) == HostKind.CONTAINER


def on_pod(step: StepRecord, record: ScenarioRecord) -> bool:
    return record.scenario.hosts.get(step.host) == HostKind.POD


def _store(step: StepRecord, record: ScenarioRecord, key: str) -> Participant:
    if step.store != StoreKind.HOME:
        name = {StoreKind.POSTGRES: "PostgreSQL", StoreKind.SQLITE: "SQLite"}.get(step.store, step.store)
        return Participant(key, "store", name, ("SessionFs store", "every step's session files"))
    if on_pod(step, record):  # the home is a claim, which podman makes a volume
        if step.home == HomeKind.SHARED:
            return Participant(key, "store", "shared claim", ("one claim's volume", "every step's pod mounts"))
        return Participant(key, "store", f"{step.step}'s own claim", ("a new claim", "empty when it started"))
    if on_container(step, record):  # the home is a volume of the container engine
        if step.home == HomeKind.SHARED:
            return Participant(key, "store", "shared volume", ("one named volume", "every step mounts"))
        if step.home == HomeKind.ANONYMOUS:
            return Participant(key, "store", f"{step.step}'s anonymous volume", ("lives with its container",
                                                                                 "empty when it started"))
        return Participant(key, "store", f"{step.step}'s own volume", ("a new named volume", "empty when it started"))
    if step.home == HomeKind.SHARED:
        return Participant(key, "store", "shared home", ("one COPILOT_HOME", "for every step"))
    if step.home == HomeKind.COPIED:
        return Participant(key, "store", f"{step.step}'s home", ("own home, the session's", "folder copied in"))
    return Participant(key, "store", f"{step.step}'s own home", ("empty when it started",))


def _model(backend: Backend) -> Participant:
    if backend.kind == COPILOT:
        return Participant(MODEL, "model", "Copilot service", (backend.model, "requests not recorded"))
    if backend.kind == OPENAI_COMPATIBLE:
        return Participant(MODEL, "model", "relay → model", (backend.model, "records every request"))
    if backend.kind == WITNESS_COPILOT_API:
        return Participant(MODEL, "model", "witness as Copilot API", (backend.model, "records every request"))
    return Participant(MODEL, "model", "witness model", ("knows only what it is sent", "records every request"))


def participants(history: ScenarioHistory, backend: Backend, coordinated: bool = True) -> tuple[Participant, ...]:
    record = history.record
    found = [Participant(COORDINATOR, "coordinator", "coordinator", ("passes the id along",))] if coordinated else []
    stores: dict[str, Participant] = {}
    mixed = _mixed(history)
    for step_history, spec, key in zip(history.steps, record.scenario.steps, store_keys(record)):
        step, ready = step_history.record, step_history.said.ready
        where = f"pid {ready.pid} on {ready.hostname}" if ready else "no runtime started"
        if ready and on_container(step, record):  # the hostname is the container's, named for the host
            where = f"pid {ready.pid} in container {ready.hostname}"
        if ready and on_pod(step, record):
            where = f"pid {ready.pid} in pod {ready.hostname}"
        # Which SDK the worker ran, where the scenario is about SDKs (one SDK's page is as it was).
        sdk = (CALLS[sdk_language(step_history, spec)].version(ready.sdk_version),) if ready and mixed else ()
        if coordinated and spec.device:  # the worker serves the chat and drives its page (handoff/chat/worker.py)
            found.append(Participant(f"worker:{step.step}", "worker", f"chat server {step.step}",
                                     (where, f"{spec.device}'s browser {PAGES[spec.keeps]}", acting_as(spec, record.scenario),
                                      *sdk)))
        elif coordinated:
            found.append(Participant(f"worker:{step.step}", "worker", f"worker {step.step}",
                                     (where, acting_as(spec, record.scenario), *sdk)))
        else:  # a lab run: one process, the SDK client, made every call
            found.append(Participant(f"worker:{step.step}", "worker", "the lab's process", (where, "the SDK client")))
        version = f"Copilot {ready.runtime_version}" if ready else "not started"
        found.append(Participant(f"runtime:{step.step}", "runtime", f"runtime {step.step}", (version, "its own process")))
        stores.setdefault(key, _store(step, record, key) if coordinated else
                          Participant(key, "store", "the lab's home", ("--home: its COPILOT_HOME",)))
    # A lane's header shows what workers said of themselves (a hostname, a version): as
    # much as a header holds, never a megabyte a stored run may carry
    return tuple(dataclasses.replace(lane, title=cut(lane.title, HEADER_CHARACTERS),
                                     details=tuple(cut(detail, HEADER_CHARACTERS) for detail in lane.details))
                 for lane in (*found, *stores.values(), _model(backend)))


class _StepMessages:
    """The messages of one step, in the order its worker reported its events."""

    def __init__(self, history: ScenarioHistory, step: StepHistory, spec: Step, coordinated: bool,
                 backend: Backend, store: str):
        self.step, self.spec, self.backend = step.record, spec, backend
        self.fact, self.view, self.requests = history.fact.value, step.said, step.requests
        self.worker, self.runtime = f"worker:{step.name}", f"runtime:{step.name}"
        self.store = store
        self.boss = COORDINATOR if coordinated else self.worker
        self.out: list[Message] = []
        # Requests the witness recorded for a turn the worker never reported (it was
        # killed while the runtime wrote the answer): drawn where they happened in time.
        self.unreported = list(step.unreported)
        self.filler = step.filler  # the witness's records of the step's filler turns (a "fill")
        # The runtime's compaction requests: drawn at the compact that asked for one, or (one
        # the runtime started by itself) where it happened in time.
        self.compactions = list(step.compactions)
        self.stated = history.fact.stated_text  # how a tool's result or a summary states the fact
        self.calls = CALLS[sdk_language(step, spec)]  # its calls, as its SDK spells them
        # The runtime's calls to the service besides its chats (the model list, the GitHub
        # MCP server, the GitHub API): those made by an event drawn as one message before it
        # (after it, for the create or resume that made them).
        self.service = list(step.calls)

    def say(self, source: str, target: str, label: str, kind: str, fact: FactMark | None = None) -> None:
        self.out.append(Message(source, target, cut(label), kind, self.step.step, fact, full=" ".join(label.split())))

    def messages(self, given_id: str | None, first: bool) -> list[Message]:
        for fault in self.step.faults:
            if fault.point == FaultPoint.BEFORE_STEP:
                self._fault(fault)
        if self.boss != self.worker:
            # UNKNOWN: the coordinator makes a new random id for the step (no session has it yet)
            how = {StepSession.UNKNOWN: "a new random id", StepSession.SCENARIO: "the scenario's own id"}.get(
                self.spec.session)
            how = how or ("id" if first else "id passed along")
            start = "restart its container" if self.spec.restart else "start"
            self.say(COORDINATOR, self.worker, f"{start}; {how}: {shown_id(given_id)}", "id")
        if self.view.ready:
            self.say(self.worker, self.runtime, f"start its runtime ({self.view.ready.runtime_start_ms} ms)", "call")
        later_faults = sorted((f for f in self.step.faults if f.point != FaultPoint.BEFORE_STEP),
                              key=lambda f: f.injected_at)
        for event in self.view.events:
            while self.unreported and self.unreported[0].at < event.t:
                self._request(self.unreported.pop(0), unreported=True)
            if not (isinstance(event, ActionDone) and event.action == Action.COMPACT):
                while self.compactions and self.compactions[0].at < event.t:
                    self._compaction(self.compactions.pop(0), by_itself=True)
            while later_faults and later_faults[0].injected_at < event.t:
                self._fault(later_faults.pop(0))
            if not (isinstance(event, ActionDone) and event.action in STARTING_ACTIONS):  # drawn after its call
                self._service_calls(event.t)
            self._event(event)
        for evidence in self.unreported:
            self._request(evidence, unreported=True)
        for evidence in self.compactions:
            self._compaction(evidence, by_itself=True)
        for fault in later_faults:
            self._fault(fault)
        self._service_calls()
        self._ending()
        return self.out

    def _fault(self, fault: FaultRecord) -> None:
        target = self.store if fault.point == FaultPoint.BEFORE_STEP else self.worker
        what = f"{fault.kind}: {fault.detail}" if fault.detail else f"{fault.kind} at {fault.point}"
        self.say(COORDINATOR if self.boss != self.worker else target, target, f"fault — {what}", "fault")

    def _event(self, event) -> None:
        if isinstance(event, ActionDone):
            self._action(event)
        elif isinstance(event, Turn):
            self._turn(event)
        elif isinstance(event, ActionFailed):
            if event.refused:
                self.say(self.worker, self.worker, f"guard refused {event.action}: {event.message}", "refusal")
            else:
                self.say(self.worker, self.runtime, f"{event.action} failed: {event.message}", "error")
        elif isinstance(event, Skipped):
            self.say(self.worker, self.worker, f"skipped {event.action}: {event.reason}", "note")
        elif isinstance(event, Holding):
            during = f" during {event.during}" if event.during else ""
            self.say(self.worker, self.worker, f"holding at {event.point}{during}", "note")
        elif isinstance(event, EventLog) and (event.branch_points or event.unreadable_lines):
            self.say(self.store, self.store, f"log: {event.branch_points} fork(s), {event.unreadable_lines} torn line(s)",
                     "note")
        elif isinstance(event, Finished):
            reported = self.view.reported_session_id
            if self.boss != self.worker:
                self.say(self.worker, COORDINATOR, f"finished; id {shown_id(reported)}", "id")

    def _action(self, done: ActionDone) -> None:
        w, r, s, calls = self.worker, self.runtime, self.store, self.calls
        action = done.action
        if action in (Action.MINT, Action.MINT_FOR_KEY):
            self.say(w, w, f"the app mints an id for {self.spec.principal}: {shown_id(done.session_id)}", "note")
        elif action in (Action.CREATE, Action.CREATE_WITHOUT_ID):
            given = calls.given_id.format(shown_id(done.session_id)) if action == Action.CREATE else "no id"
            self.say(w, r, f"{calls.create}({given})", "call")
            self._service_calls(done.t)
            self._memory()
            self.say(r, s, "session.start written" + (" (reused)" if done.reused else ""), "write")
        elif action == Action.RESUME and self.spec.keeps == BrowserKeeps.CONVERSATION:
            self.say(w, w, f"the page shows the {done.shown} message(s) its browser kept; no id to resume", "note")
        elif action in RESUMING_ACTIONS:
            if action == Action.RESUME_MOST_RECENT:
                self.say(w, r, f"{calls.listing}() → {len(done.listed or ())}; resume the newest", "call")
            self.say(w, r, f"{calls.resume}({shown_id(done.session_id)})", "call")
            self._service_calls(done.t)
            self._memory()
            self.say(s, r, self._loaded(done), "load")
        elif action == Action.CLOSE:
            self.say(w, r, f"{calls.close}() — the close", "call")
            self.say(r, s, "session.shutdown written", "write")
        elif action == Action.METADATA:
            self.say(w, r, f"{calls.metadata}({shown_id(done.session_id)})", "call")
            self.say(r, w, "→ metadata" if done.found else "→ None", "reply")
        elif action == Action.LIST:
            self.say(w, r, f"{calls.listing}()", "call")
            self.say(r, w, f"→ {len(done.listed or ())} session(s)", "reply")
        elif action == Action.DISCOVER:
            self.say(w, s, f"registry: newest of {len(done.registered or ())} session(s)", "call")
        elif action == Action.FILL:
            self._fill(done)
        elif action == Action.COMPACT:
            self.say(w, r, "history.compact() — compact now", "call")
            asked = [e for e in self.compactions if e.at <= done.t]
            self.compactions = self.compactions[len(asked):]
            for evidence in asked:
                self._compaction(evidence)
            if not asked and self.backend.seen_on_the_wire:
                self.say(r, r, "the model has no record of a compaction request", "error")
            self.say(r, s, "compacted: the history replaced by the summary", "write")
        else:
            self.say(w, r, action, "call")

    def _service_calls(self, until: float | None = None) -> None:
        """The service calls made by ``until`` (None: all left), as one message saying
        which, whose token they carried, and whether any carried the fact or the id."""
        due = [call for call in self.service if until is None or call.at <= until]
        if not due:
            return
        self.service = self.service[len(due):]
        self.say(self.runtime, MODEL, service_calls(due), "service")

    def _fill(self, done: ActionDone) -> None:
        """A long history's filler turns, drawn as one exchange: how many requests, how
        long their conversations grew, and in how many the fact told before them still was."""
        w, r = self.worker, self.runtime
        self.say(w, r, f"{self.calls.send} × {done.turns}: filler turns ({done.ms} ms)", "call")
        seen = self.filler
        if not self.backend.seen_on_the_wire:
            self.say(r, MODEL, f"{done.turns} requests (not recorded)", "request")
        elif not seen:
            self.say(r, r, "the model has no record of these turns", "error")
        else:
            sizes = sorted(e.messages_received for e in seen)
            carried = sum(1 for e in seen if e.fact_sent)
            self.say(r, MODEL, f"{len(seen)} requests: {sizes[0]}–{sizes[-1]} messages, with the fact in {carried} "
                               f"of {len(seen)}", "request", FactMark(self.fact, carried == len(seen), len(seen)))
        self.say(MODEL, r, f"{done.turns} answers", "answer")
        self.say(r, self.store, "turns appended to the log", "write")

    def _memory(self) -> None:
        """Memory, where the step turned it on: it could carry the fact besides the history."""
        where = MEMORY_PLACES.get(dict(self.spec.settings).get(AppSetting.MEMORY))
        if where:
            self.say(self.runtime, self.runtime, f"memory on: memories {where}", "note")

    def _compaction(self, evidence: Evidence, by_itself: bool = False) -> None:
        """A compaction request and the summary the model wrote, marked with the fact as the
        witness found it in the history sent, and in the summary."""
        r = self.runtime
        count = f"{evidence.messages_received} message{'' if evidence.messages_received == 1 else 's'}"
        who = "the runtime compacts by itself: " if by_itself else ""
        if evidence.fact_sent is None:
            self.say(r, MODEL, f"{who}compaction request: {count}, fact not checked", "request")
        else:
            self.say(r, MODEL, f"{who}compaction request: {count}, {'with' if evidence.fact_sent else 'without'}",
                     "request", FactMark(self.fact, evidence.fact_sent))
        self.say(MODEL, r, f"summary: “{evidence.reply}”", "answer", FactMark(self.fact, self.stated in evidence.reply))

    def _tool_call(self, call: Evidence, after: Evidence | None) -> None:
        """The model's tool call, where it happened in its turn: the app's handler runs it
        (when the step registered the tool) or the runtime answers it itself, and the result
        goes back in the next request (``after``; None: the turn never got that far)."""
        w, r, name = self.worker, self.runtime, call.tool_called
        self.say(MODEL, r, f"tool call: {name}", "answer")
        result = next((text for role, text in reversed(after.conversation) if role == "tool"), None) if after else None
        mark = None if result is None else FactMark(self.fact, self.stated in result)
        pending = after is None and self.view.holding is not None and \
            self.view.holding.point == FaultPoint.INSIDE_PERMISSION
        if name in self.spec.tools and pending:  # the turn stopped while the app was asked: the tool never ran
            self.say(r, w, f"asks the app's permission handler to run {name}", "call")
        elif name in self.spec.tools:
            self.say(r, w, f"runs the app's tool {name}", "call")
            if result is not None:
                self.say(w, r, f"tool result: “{result}”", "reply", mark)
        elif result is not None:  # the runtime has no such tool: it answers the call itself
            self.say(r, r, f"no tool {name} here; the runtime answers: “{result}”", "note", mark)

    def _loaded(self, done: ActionDone) -> str:
        """The event count is known for the step's last resume only (the log's summary at its end)."""
        log = self.view.eventlog
        resumes = [a for a in self.view.actions if a.action in RESUMING_ACTIONS]
        if log and log.resume_event_count is not None and resumes and resumes[-1] is done:
            in_use = " (alreadyInUse)" if log.already_in_use else ""
            return f"loaded {log.resume_event_count} events{in_use}"
        return "events loaded"

    def _turn(self, turn: Turn) -> None:
        w, r = self.worker, self.runtime
        self.say(w, r, f"{self.calls.send}: {turn.kind} ({turn.ms} ms)", "call")
        records = self.requests.get(turn.turn, ())
        if not self.backend.seen_on_the_wire:
            self.say(r, MODEL, "request (not recorded)", "request")
        elif not records:
            self.say(r, r, "the model has no record of this turn", "error")
        for index, evidence in enumerate(records):
            self._request(evidence)
            if evidence.tool_called:
                self._tool_call(evidence, records[index + 1] if index + 1 < len(records) else None)
        self.say(MODEL, r, f"“{turn.answer}”" if turn.answer is not None else "(no reply)", "answer")
        self.say(r, self.store, "turn appended to the log", "write")

    def _request(self, evidence: Evidence, unreported: bool = False) -> None:
        """A request the witness recorded, marked with the fact as the witness found it."""
        count = f"{evidence.messages_received} message{'' if evidence.messages_received == 1 else 's'}"
        which = f"turn {evidence.turn} (never reported) " if unreported else ""
        if evidence.fact_sent is None:
            self.say(self.runtime, MODEL, f"{which}request: {count}, fact not checked", "request")
        else:
            mark = FactMark(self.fact, evidence.fact_sent)
            outside = [OUTSIDE_HISTORY[place] for place in evidence.fact_in if place in OUTSIDE_HISTORY]
            where = f" ({' and '.join(outside)}: not the history)" if outside else ""
            self.say(self.runtime, MODEL,
                     f"{which}request: {count}, {'with' if evidence.fact_sent else 'without'}{where}", "request", mark)
        if unreported and evidence.tool_called:  # the turn never ended: its call's result is not known
            self._tool_call(evidence, None)

    def _ending(self) -> None:
        view = self.view
        if view.finished is not None or view.killed_on_purpose:
            return
        if self.step.timed_out:
            self.say(self.worker, self.worker, "timed out: killed by the coordinator", "error")
        elif view.ready is not None or self.step.exit_code is not None:
            self.say(self.worker, self.worker, f"ended without 'finished' (exit code {self.step.exit_code})", "error")


STARTING_ACTIONS = (Action.CREATE, Action.CREATE_WITHOUT_ID, *RESUMING_ACTIONS)  # a session starts: calls follow
SERVICE = {"models": "the model list", "mcp": "the GitHub MCP server", "github": "the GitHub API"}


def service_calls(calls: list[Call]) -> str:
    """``also asked: the model list; the GitHub MCP server (server/discover, initialize);
    the GitHub API ×4 — alice's token; no fact, no session id``"""
    said = []
    for kind in dict.fromkeys(call.kind for call in calls):
        mine = [call for call in calls if call.kind == kind]
        rpc = list(dict.fromkeys(method for call in mine for method in call.rpc))
        said.append(SERVICE.get(kind or "", kind or "another path") + (f" ×{len(mine)}" if len(mine) > 1 else "")
                    + (f" ({', '.join(rpc)})" if rpc else ""))
    principals = sorted({call.principal for call in calls if call.principal})
    whose = f"{', '.join(principals)}'s token" if principals else "no token it issued"
    carried = [what for what, found in (("the fact", any(call.fact_sent for call in calls)),
                                        ("the session id", any(call.session_id for call in calls))) if found]
    return f"also asked: {'; '.join(said)} — {whose}; " + (f"carrying {' and '.join(carried)}" if carried
                                                            else "no fact, no session id")


def sequence(history: ScenarioHistory, backend: Backend = Backend(), coordinated: bool = True) -> Sequence:
    """The diagram's data for one scenario of a run (``coordinated`` False: a lab run,
    where one process does everything and nothing passes the id along)."""
    record = history.record
    messages: list[Message] = []
    keys = store_keys(record)
    for index, (step, spec) in enumerate(zip(history.steps, record.scenario.steps)):
        drawn = _StepMessages(history, step, spec, coordinated, backend, keys[index])
        messages += drawn.messages(step.record.session_id, index == 0)
    if record.crashed:
        who = COORDINATOR if coordinated else (f"worker:{record.steps[-1].step}" if record.steps else None)
        if who:
            messages.append(Message(who, who, cut(f"crashed: {record.crashed}"), "error",
                                    full=" ".join(f"crashed: {record.crashed}".split())))
    return Sequence(participants(history, backend, coordinated), tuple(messages))
