"""What a run produced, as data: the record a run stores and the checker re-judges.

A record holds only what was observed — each step's raw stdout lines exactly as its
worker wrote them, the faults injected with their times, exit codes, the witness's
evidence, the scenarios as they were loaded — and nothing judged. The checker
(handoff/checker/) derives every verdict from it, so a stored run can be judged again
later by a newer checker, and two runs can be compared turn by turn.

No key, token or password is ever part of a record: the backend is kept by the names
of its variables, and a store URL without its password.
"""

from __future__ import annotations

import os
import platform
import secrets
import socket
from datetime import datetime, timezone
from importlib.metadata import version as package_version

import msgspec

from handoff import __version__, versions
from handoff.bounded_read import values_in
from handoff.fact import MAX_FACT_LENGTH, Fact
from handoff.protocol import (
    ActionDone,
    ActionFailed,
    Backend,
    Cpu,
    Event,
    EventLog,
    Finished,
    LATEST_TIME,
    Holding,
    Integer,
    Number,
    Ready,
    Stdout,
    Time,
    Turn,
    decode_all,
)
from handoff.runtime_locator import PINNED_RUNTIME
from handoff.scenario import NAME, NAME_RULE, Scenario
from handoff.witness.evidence import Call, Evidence
from handoff.words import FaultKind


class FaultRecord(msgspec.Struct, frozen=True):
    """One fault the step driver injected, and when; ``healed_at`` for faults that heal."""

    kind: str  # a FaultKind
    point: str  # a FaultPoint
    injected_at: Time
    healed_at: Time | None = None
    detail: str = ""


# dict=True: a record keeps its step's decoded events (view()) beside its stored fields,
# never encoded with them.
class StepRecord(msgspec.Struct, dict=True):
    step: str
    host: str
    home: str  # a HomeKind
    store: str  # a StoreKind
    session_id: str | None  # the id the step was given
    lines: list[str] = []  # the worker's stdout, line by line, as it wrote it
    exit_code: Integer | None = None
    timed_out: bool = False
    faults: list[FaultRecord] = []
    stderr_tail: str = ""
    notes: list[str] = []  # what the driver saw besides the worker's lines (a full disk, say)
    started_at: Time = 0.0
    ended_at: Time = 0.0
    # What the processes the tool killed in this step (a crash fault, a time-out) had used
    # by then: a killed worker reports nothing itself.
    killed_cpu_s: Cpu | None = None
    # The coordinator's lease clock during the step (guarded steps; None: not given one):
    # what its leases were taken and judged at (handoff/coordinator/lease_clock.py).
    lease_clock: Number | None = None

    def view(self) -> StepEvents:
        """The step's events, decoded the first time they are asked for (the coordinator
        asks when the step ends) and kept: every later reader, the checker and each
        report, takes these. Decoded again only if the lines changed since (a step's
        lines grow while it runs; a redacted copy of the record has lines of its own)."""
        kept = self.__dict__.get("_view")
        if kept is None or not kept.read(self.lines):
            kept = self.__dict__["_view"] = StepEvents(self)
        return kept

    def heard(self, said: Stdout) -> None:
        """Keep a worker's stdout as its driver read it, each line decoded as it came:
        :meth:`view` gives those events, without decoding the lines again."""
        self.lines = said.lines
        self.__dict__["_view"] = StepEvents(self, said)


class StepEvents:
    """A step's events, decoded once, with the questions the checker asks of them: as the
    step driver read them, or (a stored run, a lab run) when first asked for. Either way a
    worker's stdout lines become the protocol's typed events in one place,
    :class:`handoff.protocol.Stdout`."""

    def __init__(self, record: StepRecord, said: Stdout | None = None):
        self.record = record
        self._lines, self._count = record.lines, len(record.lines)
        self.events, self.problems = (said.events, said.problems) if said is not None else decode_all(record.lines)

    def read(self, lines: list[str]) -> bool:
        """Whether these events are those of ``lines`` as they are now."""
        return lines is self._lines and len(lines) == self._count

    def of(self, kind: type) -> list:
        return [event for event in self.events if isinstance(event, kind)]

    def first(self, kind: type):
        return next((event for event in self.events if isinstance(event, kind)), None)

    @property
    def ready(self) -> Ready | None:
        return self.first(Ready)

    @property
    def finished(self) -> Finished | None:
        return self.first(Finished)

    @property
    def turns(self) -> list[Turn]:
        return self.of(Turn)

    @property
    def actions(self) -> list[ActionDone]:
        return self.of(ActionDone)

    @property
    def failures(self) -> list[ActionFailed]:
        return self.of(ActionFailed)

    @property
    def eventlog(self) -> EventLog | None:
        return self.first(EventLog)

    @property
    def holding(self) -> Holding | None:
        return self.first(Holding)

    @property
    def killed_on_purpose(self) -> bool:
        return any(fault.kind == FaultKind.KILL for fault in self.record.faults)

    @property
    def reported_session_id(self) -> str | None:
        """The id the worker ended up using (the runtime or a listing may have chosen it)."""
        ids = [e.session_id for e in self.events if getattr(e, "session_id", None)]
        return ids[-1] if ids else self.record.session_id


class ScenarioRecord(msgspec.Struct):
    name: str
    scenario: Scenario  # as it was loaded for this run
    steps: list[StepRecord] = []
    evidence: list[Evidence] = []  # the witness's records of this scenario's requests
    calls: list[Call] = []  # its other requests to the Copilot service: models, MCP, the GitHub API
    seconds: Number = 0.0
    skipped: str | None = None  # why it did not run (a missing capability)
    crashed: str | None = None  # why the tool could not finish running it


class Versions(msgspec.Struct, frozen=True):
    tool: str
    sdk: str
    runtime: str  # the runtime the run was pointed at, as its workers reported it (or the pin)
    python: str
    os: str
    machine: str  # hostname
    cores: Integer


class RunOptions(msgspec.Struct, frozen=True):
    fact: str  # the value of the fact told (Fact.value); stored apart from its topic
    topic: str
    jobs: Integer
    backend: Backend
    fork_workers: bool = True
    remote_hosts: dict[str, str] = {}  # name -> ssh://user@machine:port/home (no secrets in it)
    store: str | None = None  # a PostgreSQL URL the user named, its password replaced by ***
    engine: str = "podman"  # the container engine for container hosts

    @property
    def fact_told(self) -> Fact:
        """The fact every scenario of the run told, whole: its value and its topic."""
        return Fact(self.fact, self.topic)


class RunRecord(msgspec.Struct):
    id: str
    command: str  # a Command
    started_at: float  # checked in decode(), as a time that can be shown
    finished_at: float
    versions: Versions
    options: RunOptions
    scenarios: list[ScenarioRecord] = []


def new_run_id(at: float) -> str:
    """``<UTC time>-<short random id>``: sorts by time, unique across machines."""
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def this_machine(runtime_version: str | None) -> Versions:
    """The versions of what ran here; ``runtime_version`` as a runtime reported it (the
    pinned one when none started)."""
    return Versions(tool=__version__, sdk=package_version("github-copilot-sdk"),
                    runtime=runtime_version or PINNED_RUNTIME, python=platform.python_version(),
                    os=platform.platform(), machine=socket.gethostname(), cores=os.cpu_count() or 1)


def encode(record: RunRecord) -> bytes:
    return msgspec.json.encode(record)


# How much a run record may hold. Its bytes are bounded when it is read (runs/store.py),
# but a record of many small items within them would still decode into more objects, and
# render into more output, than memory holds. A worker says a few lines an action; a
# request is an evidence record, and a scenario's longest history (MAX_FILLER_TURNS, 2,000
# turns) makes a few thousand; the default matrix is 50 scenarios, a skew grid a few
# hundred.
MAX_SCENARIOS = 5_000
MAX_STEP_LINES = 10_000
MAX_EVIDENCE = 50_000
# And before any of it is decoded: a 50-scenario run has some 40,000 commas, brackets and
# lines in 1 MB, a 2,000-turn history under a million (bounded_read.values_in).
MAX_VALUES = 4_000_000
MAX_NAME = 200  # characters of a scenario's name: a file's stem, or a skew cell's two version pairs


class UnreadableRun(ValueError):
    """A stored run this version cannot take as a record: a stored run is input like any
    other (copied from elsewhere, edited by hand), read and checked before it is used."""


def decode(data: bytes) -> RunRecord:
    """The record in ``data``, checked beyond its types: times that can be shown as dates,
    and steps that belong to their scenario. UnreadableRun says what is wrong."""
    values = values_in(data)
    if values > MAX_VALUES:
        raise UnreadableRun(f"it has {values:,} commas, brackets and lines, more than a run's record ({MAX_VALUES:,} at "
                            f"most)")
    try:
        record = msgspec.json.decode(data, type=RunRecord)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise UnreadableRun(str(error)) from None
    except RecursionError:  # an unknown field nested deeper than the decoder goes
        raise UnreadableRun("it nests deeper than a run record does") from None
    for name, at in (("started_at", record.started_at), ("finished_at", record.finished_at)):
        if not 0.0 <= at <= LATEST_TIME:  # also false for NaN
            raise UnreadableRun(f"its {name} ({at!r}) is not a time between 1970 and 9999")
    for name, text in (("fact", record.options.fact), ("topic", record.options.topic)):
        if len(text) > MAX_FACT_LENGTH:  # a run refuses longer ones; every diagram lays each out
            raise UnreadableRun(f"its {name} is {len(text):,} characters long, longer than a run's: "
                                f"{MAX_FACT_LENGTH} at most")
    if len(record.scenarios) > MAX_SCENARIOS:
        raise UnreadableRun(f"it holds {len(record.scenarios):,} scenarios, more than a run does ({MAX_SCENARIOS:,} at "
                            f"most)")
    for scenario in record.scenarios:
        lines = max((len(step.lines) for step in scenario.steps), default=0)
        records = len(scenario.evidence) + len(scenario.calls)
        if lines > MAX_STEP_LINES or records > MAX_EVIDENCE:
            raise UnreadableRun(f"scenario {scenario.name!r} holds {lines:,} lines in a step and "
                                f"{records:,} evidence records, more than a run makes (at most "
                                f"{MAX_STEP_LINES:,} and {MAX_EVIDENCE:,})")
        if len(scenario.name) > MAX_NAME or not scenario.name.isprintable():
            raise UnreadableRun(f"a scenario's name is {len(scenario.name):,} characters or holds a line break or "
                                f"another character no name shows: {scenario.name[:40]!r}")
        if not scenario.scenario.steps:
            raise UnreadableRun(f"scenario {scenario.name!r} has no steps (a scenario has one at least)")
        named = next((step.name for step in scenario.scenario.steps if not NAME.fullmatch(step.name)), None)
        if named is not None:
            raise UnreadableRun(f"scenario {scenario.name!r} has a step named {named[:40]!r}: a step's name is "
                                f"{NAME_RULE}")
        known = {step.name for step in scenario.scenario.steps}
        stray = next((step.step for step in scenario.steps if step.step not in known), None)
        if stray is not None:
            raise UnreadableRun(f"scenario {scenario.name!r} has a step {stray!r} that its scenario does not list")
        if len({step.step for step in scenario.steps}) < len(scenario.steps):  # a run records each step once
            raise UnreadableRun(f"scenario {scenario.name!r} records a step more than once")
        planned = [step.name for step in scenario.scenario.steps]
        if [step.step for step in scenario.steps] != planned[:len(scenario.steps)]:  # every reader pairs them so
            raise UnreadableRun(f"scenario {scenario.name!r} records its steps in another order than it lists them "
                                f"({', '.join(step.step for step in scenario.steps)[:80]}; it lists "
                                f"{', '.join(planned)[:80]})")
        for step in scenario.scenario.steps:
            if step.runtime is not None and not versions.well_formed(step.runtime):
                raise UnreadableRun(f"scenario {scenario.name!r} step {step.name!r} names runtime {step.runtime[:40]!r}, "
                                    f"not a version such as 1.0.92")
            if step.sdk is not None and not versions.well_formed_sdk(step.sdk):
                raise UnreadableRun(f"scenario {scenario.name!r} step {step.name!r} names SDK {step.sdk[:40]!r}, not a "
                                    f"version such as 1.0.25 or node@1.0.14")
    return record


__all__ = ["UnreadableRun", "Event", "FaultRecord", "RunOptions", "RunRecord", "ScenarioRecord", "StepEvents", "StepRecord", "Versions"]
