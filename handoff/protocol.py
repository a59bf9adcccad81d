"""The worker protocol: the one place that says what a coordinator and a worker exchange.

The coordinator writes one :class:`WorkerSpec` as JSON to a worker's standard input; the
worker answers with one event per line on its standard output, each a frozen, typed
record below, tagged by its ``event`` field. Every side that reads events — the step
driver, the checker, stored runs, the benchmarks — decodes them with :func:`decode`, so a
field renamed here is renamed everywhere, and a line that does not decode is a
:class:`ProtocolViolation` the reader records, never a dict it guesses at.

Nothing here imports the SDK or anything above it: the worker, the hosts and the
coordinator can all use it.
"""

from __future__ import annotations

import os
from typing import Annotated, Mapping, Union

import msgspec

from handoff.words import BrowserKeeps, SdkLanguage

# --- numbers read back: bounded where they are decoded -----------------------------------

# A worker's line, a stored run or the witness's evidence may come from elsewhere (a run
# edited by hand, a worker gone wrong). Every number in them is decoded into one of these,
# so no reader meets an integer no float can hold (10**400: OverflowError in a division),
# a float that is not finite, or a time no date can show in some time zone: a value out of
# bounds makes that one record unreadable, said as such, never an exception in a reader.
LATEST_TIME = 253402128000.0  # 9999-12-30T00:00:00Z: still before year 10000 in every time zone
Integer = Annotated[int, msgspec.Meta(ge=-(2**53), le=2**53)]  # exact as a float too
Number = Annotated[float, msgspec.Meta(ge=-1e15, le=1e15)]
Time = Annotated[float, msgspec.Meta(ge=0.0, le=LATEST_TIME)]  # seconds since 1970, as time.time() gives

# --- holds: where a worker waits for the coordinator's faults ---------------------------

# A worker stops at its hold points (handoff.words.HOLD_POINTS) and says ``holding``; it
# goes on when the coordinator writes this line to its stdin (or is killed meanwhile).
RELEASE = b'{"release": true}\n'
# ``python -m handoff.worker --spec FILE`` reads its spec from that file, whole, instead of
# stdin's first line: a cluster's pod has it mounted and no coordinator on its stdin.
SPEC_OPTION = "--spec"


class Hold(msgspec.Struct, frozen=True):
    """A point where the worker must stop and say ``holding``: ``point`` (one of
    handoff.words.HOLD_POINTS) of turn ``turn`` (the step's turns counted from 1)."""

    point: str
    turn: Integer = 1


# --- the model backend, as plain data ---------------------------------------------------

WITNESS = "witness"  # the witness as a BYOK provider (the matrix's path)
WITNESS_COPILOT_API = "witness-copilot-api"  # the witness as the GitHub Copilot API (the lab's path)
COPILOT = "copilot"
COPILOT_API_PATH = "Copilot API"  # Backend.path: the lab's path to a model
BYOK_PATH = "BYOK"  # the app's own provider
OPENAI_COMPATIBLE = "openai-compatible"
WITNESS_MODEL = "handoff-witness"  # the name the witness reports; it answers to any name


class Backend(msgspec.Struct, frozen=True):
    """Where the model comes from. Secrets are referred to by the NAME of the variable
    that holds them, so a Backend can be printed, stored with a run and sent to a worker;
    only the process that starts a runtime reads the values (handoff/worker/model.py).
    Choosing and checking one is handoff/backends.py's job."""

    kind: str = WITNESS
    model: str = WITNESS_MODEL
    provider_url: str | None = None  # openai-compatible: the endpoint's base URL (…/v1)
    api_key_env: str | None = None  # openai-compatible: the variable holding its key
    token_env: str | None = None  # copilot: the variable the GitHub token was found in

    @property
    def seen_on_the_wire(self) -> bool:
        """Whether the tool can record what each request sent: the witness records it,
        and an OpenAI-compatible endpoint is reached through the recording relay. The
        Copilot service is reached by the runtime directly, so only its answers count."""
        return self.kind != COPILOT

    @property
    def path(self) -> str:
        """Which of the SDK's two paths to a model the runtime takes: the Copilot API (the
        lab's: a token, a model the service lists, a resume that keeps the session's model)
        or a BYOK provider (the app's own endpoint, which a resume must be given again)."""
        return COPILOT_API_PATH if self.kind in (COPILOT, WITNESS_COPILOT_API) else BYOK_PATH

    def describe(self) -> str:
        """One line for people: what talks to the runtime, on which path, without any secret."""
        if self.kind == COPILOT:
            return f"GitHub Copilot service (the Copilot API), model {self.model}, token from ${self.token_env}"
        if self.kind == OPENAI_COMPATIBLE:
            key = f"key from ${self.api_key_env}" if self.api_key_env else "no key"
            return f"OpenAI-compatible endpoint {self.provider_url} as a BYOK provider, model {self.model}, {key}"
        if self.kind == WITNESS_COPILOT_API:
            return f"the witness model as the Copilot API ({self.model or 'model from list_models'})"
        return f"the witness model as a BYOK provider ({self.model})"

    def secret_env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables holding this backend's secrets, with their values."""
        environ = os.environ if environ is None else environ
        names = [n for n in (self.token_env, self.api_key_env) if n]
        return {n: environ[n] for n in names if environ.get(n)}

    def scrub(self, text: str, environ: Mapping[str, str] | None = None) -> str:
        """``text`` with every secret this backend uses replaced by ***."""
        for secret in self.secret_env(environ).values():
            text = text.replace(secret, "***")
        return text


# What a run's steps use unless told otherwise: the witness as the GitHub Copilot API (the
# lab's path), naming the model the lab's sample picks (one the witness lists).
DEFAULT_RUN_BACKEND = Backend(WITNESS_COPILOT_API, "claude-haiku-4.5")


# --- coordinator -> worker ------------------------------------------------------------

class WorkerSpec(msgspec.Struct, frozen=True, omit_defaults=True):
    scenario: str
    step: str
    host: str
    runtime_path: str  # "" means the runtime installed on the worker's own machine (an SSH host)
    home: str
    witness_url: str
    fact_value: str
    fact_topic: str
    actions: tuple[str, ...]
    backend: Backend = Backend()
    session_id: str | None = None
    tags: dict[str, str] = {}  # x-handoff-* headers on every model request (witness/relay only)
    store: str | None = None  # a database URL: session files go there through SessionFs
    owner: str = "alice"  # the principal this worker acts as, recorded in the registry
    guarded: bool = False  # go through the gate (owner, id rules, receipt, lease) or call the SDK raw
    reuse: bool = False  # a guarded create of an existing id continues it instead of being refused
    registry: str | None = None  # registry database when the session files are not in one
    without_provider: bool = False  # resume with no provider settings, to show they are not stored
    app_key: str = ""  # guarded steps: the app's key for minting ids (hex), a secret: never shown or stored
    # The versions the step asks for (None: whatever this worker has). A runtime or SDK
    # that reports another version is an error of the step, never a silent substitute.
    runtime_version: str | None = None
    sdk_version: str | None = None
    turn_timeout: Number = 60.0  # seconds the SDK waits for a turn's answer
    # Guarded resumes by a runtime older than the session's last writer that the scenario
    # declares known-good: (last writer's version, resuming version).
    known_good: tuple[tuple[str, str], ...] = ()
    holds: tuple[Hold, ...] = ()  # where to stop for the coordinator's faults
    # The time on the coordinator's lease clock for this whole step: guarded leases are
    # taken and judged at it. None: the wall clock, as an app would keep.
    lease_clock: Number | None = None
    # The values of the backend's secret variables, only for a worker whose environment
    # cannot carry them (one started over SSH: sshd passes no environment on). They travel
    # on the worker's stdin, never on a command line, and are never written down.
    secrets: dict[str, str] = {}
    # On the Copilot-API path: the token the run's witness issued to this step, which its
    # runtime sends instead of a user's GitHub token (a secret, like ``secrets``).
    witness_token: str = ""
    # The app's tools (AppTool values) to register on every create and resume.
    tools: tuple[str, ...] = ()
    # AppSetting -> SettingValue: what to pass on every create and resume besides the provider.
    settings: dict[str, str] = {}
    # How many turns each ``fill`` action takes (a long history's filler turns).
    filler_turns: Integer = 0
    # A step done in `handoff chat`'s page: the browser profile it is done in (Step.device).
    device: str | None = None
    # What that page keeps in the browser (Step.keeps: BrowserKeeps).
    keeps: str = BrowserKeeps.SESSION_ID.value
    # Where the step's host keeps its browsers' profiles; "" in the step's home.
    devices: str = ""

    def __repr__(self) -> str:  # never show the secrets, whoever prints a spec
        return f"WorkerSpec(scenario={self.scenario!r}, step={self.step!r}, host={self.host!r}, actions={self.actions!r})"

    def to_json(self) -> bytes:
        """One line: the worker reads its spec up to the newline; later lines on its stdin
        are releases from holds (:data:`RELEASE`)."""
        return msgspec.json.encode(self) + b"\n"

    @classmethod
    def from_json(cls, data: bytes | str) -> WorkerSpec:
        return msgspec.json.decode(data, type=cls)


# --- worker -> coordinator: the events ------------------------------------------------

class _Event(msgspec.Struct, frozen=True, tag_field="event", forbid_unknown_fields=True, kw_only=True):
    t: Time  # time.time() in the worker when it said so


class Ready(_Event, tag="ready"):
    """The worker's runtime is up: who and where it is."""

    pid: Integer
    hostname: str
    address: str | None
    home: str
    runtime_version: str
    sdk_version: str  # as a step's ``sdk`` names it: "1.0.25" (Python), "node@1.0.14" (Node.js)
    runtime_start_ms: Integer
    store: str | None = None  # the store's address, without any password
    sdk_language: str = SdkLanguage.PYTHON  # a SdkLanguage: which SDK's worker this is


class ActionDone(_Event, tag="action"):
    """A non-turn action succeeded; the fields it reports depend on the action."""

    action: str
    session_id: str | None
    ms: Integer
    found: bool | None = None  # metadata: did get_session_metadata return anything
    summary: str | None = None  # metadata: its summary; compact: the summary that replaced the history
    listed: tuple[str, ...] | None = None  # list, resume-most-recent: the ids listed
    registered: tuple[str, ...] | None = None  # discover: the ids the registry lists
    reused: bool = False  # a guarded create that continued an existing session
    turns: Integer | None = None  # fill: the filler turns it took, each answered
    shown: Integer | None = None  # resume in the chat's page: the messages the page showed on opening
    # fill through a database store: after each filler turn, the bytes the session files
    # were given in it and the bytes the database paid for them (counted as written_is says)
    store_given: tuple[Integer, ...] | None = None
    store_written: tuple[Integer, ...] | None = None
    store_written_is: str | None = None


class Turn(_Event, tag="turn"):
    """One turn answered. ``turn`` counts the step's turns from 1."""

    turn: Integer
    kind: str  # a TurnKind
    session_id: str | None
    prompt: str
    answer: str | None
    ms: Integer


class ActionFailed(_Event, tag="error"):
    """An action failed; the worker goes on with the actions that do not need it."""

    action: str
    message: str
    refused: bool = False  # the guard said no, rather than the runtime failing
    ms: Integer | None = None
    turn: Integer | None = None  # for a turn that failed: its number in the step
    # A turn the app gave up waiting for: its time-out in seconds. A verdict on such a turn
    # rested on time, and the judgement says so.
    timeout_s: Number | None = None


class Skipped(_Event, tag="skipped"):
    action: str
    reason: str


class Holding(_Event, tag="holding"):
    """The worker waits at a fault point until the coordinator releases it (or kills it)."""

    session_id: str | None
    point: str  # one of HOLD_POINTS
    turn: Integer = 1
    during: str | None = None


class EventLog(_Event, tag="eventlog"):
    """What the session's event log (events.jsonl) said when the worker ended."""

    session_id: str
    found: bool
    events: Integer = 0
    starts: Integer = 0
    resumes: Integer = 0
    closed_before_resume: bool | None = None
    resume_event_count: Integer | None = None
    already_in_use: bool | None = None
    branch_points: Integer = 0
    unreadable_lines: Integer = 0
    created_by: str | None = None  # the copilotVersion its first session.start records
    events_before_resume: Integer | None = None  # events in the log when the last session.resume was written
    last_prompt: str | None = None  # the last user.message
    last_reply: str | None = None  # the last assistant.message after it, if any
    last_reply_ms: Integer | None = None  # from that prompt to that answer, by the log's timestamps
    messages_before_resume: Integer | None = None  # user.message events the last resume had behind it


class Cpu(msgspec.Struct, frozen=True):
    worker: Number  # this worker's own CPU seconds (from its fork, or its interpreter start)
    runtime: Number  # its reaped children: its runtime(s) and what they ran


class Finished(_Event, tag="finished"):
    ok: bool
    cpu_s: Cpu | None = None


Event = Union[Ready, ActionDone, Turn, ActionFailed, Skipped, Holding, EventLog, Finished]
_decoder = msgspec.json.Decoder(Event)


class ProtocolViolation(ValueError):
    """A line on a worker's stdout that is not an event of this protocol."""


def encode(event: _Event) -> bytes:
    return msgspec.json.encode(event) + b"\n"


def decode(line: bytes | str) -> Event:
    try:
        return _decoder.decode(line)
    except msgspec.DecodeError as error:
        raise ProtocolViolation(str(error)) from None
    except RecursionError:  # an object nested deeper than the decoder goes: no event is
        raise ProtocolViolation("nested too deeply to be an event") from None


class Stdout:
    """A worker's stdout lines, each decoded once as it is added: the lines as it wrote
    them, its events, and a description of each line that is not one (a blank line is
    neither)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.events: list[Event] = []
        self.problems: list[str] = []
        self._turns: set[int] = set()  # a worker numbers each turn once: 1, 2, ...

    def add(self, line: str) -> Event | None:
        """Keep ``line``; its event, or None when it is not one (a turn whose number an
        earlier line took is none: every reader pairs a turn with its requests by it)."""
        self.lines.append(line)
        if not line.strip():
            return None
        try:
            event = decode(line)
            if isinstance(event, Turn) and event.turn in self._turns:
                raise ProtocolViolation(f"turn {event.turn} was reported already")
        except ProtocolViolation as violation:
            shown = line if len(line) <= 80 else line[:79] + "…"
            self.problems.append(f"line {len(self.lines)} is not a protocol event ({violation}): {shown!r}")
            return None
        if isinstance(event, Turn):
            self._turns.add(event.turn)
        self.events.append(event)
        return event


def decode_all(lines: list[str]) -> tuple[list[Event], list[str]]:
    """The events of a step's stdout lines, and a description of each line that is not one."""
    said = Stdout()
    for line in lines:
        said.add(line)
    return said.events, said.problems
