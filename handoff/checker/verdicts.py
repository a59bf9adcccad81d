"""The checker's vocabulary: what verdicts (handoff/words.py) rest on, and judgements as data.

A judgement keeps the verdict, the evidence it rests on and every expectation apart, so
that the table, the Markdown, the JSON and a diff of two runs are all renderings of the
same facts (handoff/report/), and so that the exit code says what a person must do.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import TYPE_CHECKING

from handoff.checker.store_cost import CostGrowth, cost_growth
from handoff.protocol import ActionDone, ActionFailed, EventLog, Holding, Ready
from handoff.witness.evidence import Call
from handoff.words import FaultKind, NoTurn, TurnKind, Verdict

if TYPE_CHECKING:
    from handoff.runs.record import FaultRecord


class Basis(StrEnum):
    """What a verdict rests on, as the table's evidence column shows it."""

    ANSWER_AND_WIRE = "answer + wire"  # the answer, and the witness's or relay's record of the request
    ANSWER_ONLY = "answer only"  # no record of the request exists (the Copilot service)
    LOG_AND_WIRE = "log + wire"  # the answer as the session's log holds it, and the record of the request
    RUNTIME_ERROR = "runtime error"
    EVENT_LOG = "event log"  # the log a resume loaded is short of turns the app saw succeed
    GUARD = "guard"
    NOTHING = "—"


class FactSeen(StrEnum):
    """Did the fact reach the model in this turn's request?"""

    YES = "yes"
    NO = "no"
    NO_REQUEST = "no request"  # the witness has no record of this turn
    NOT_RECORDED = "not recorded"  # requests to this model cannot be recorded
    UNCHECKED = "—"  # a record exists but was not told which fact to look for


class ExitCode(IntEnum):
    """What a person must do next, for `handoff run` and `handoff report`."""

    AS_EXPECTED = 0  # every verdict as its scenario expects
    CONTRADICTED = 1  # some verdict contradicted its expectation
    BAD_INPUT = 2
    TOOL_FAILED = 3
    UNJUDGED = 4  # nothing contradicted, but some turns could not be judged, or none were
    INTERRUPTED = 130


@dataclass(frozen=True)
class Expectation:
    """One thing a scenario file expects of a turn, and whether it held. ``met`` is None
    when the evidence to check it is missing (the verdict is unknown, or there is no
    event log): that is not a contradiction, only something that could not be judged."""

    name: str  # "verdict", "forked", "closed before resume"
    wanted: str
    got: str
    met: bool | None


@dataclass(frozen=True)
class StepFacts:
    """Where a step ran and what its worker and its event log said, shared by its turns."""

    step: str
    host: str
    home: str  # a HomeKind
    store: str  # a StoreKind
    ready: Ready | None
    eventlog: EventLog | None
    actions: tuple[ActionDone, ...]
    failures: tuple[ActionFailed, ...]
    holding: Holding | None
    faults: tuple[FaultRecord, ...]
    finished: bool
    exit_code: int | None
    timed_out: bool
    problems: tuple[str, ...]  # lines that were not protocol events
    notes: tuple[str, ...] = ()  # what the step driver saw besides the worker's lines (a full disk)
    asked_runtime: str | None = None  # the versions the step asks for (None: the default)
    asked_sdk: str | None = None
    calls: tuple[Call, ...] | None = None  # its runtime's calls to the service besides chats; None: not recorded

    @property
    def closed_before_resume(self) -> bool | None:
        return self.eventlog.closed_before_resume if self.eventlog else None

    @property
    def killed_on_purpose(self) -> bool:
        return any(fault.kind == FaultKind.KILL for fault in self.faults)

    @property
    def loaded_all_events(self) -> bool | None:
        """Did the last resume load every event the log held? An older runtime skips the
        event types it does not know."""
        log = self.eventlog
        if log is None or log.resume_event_count is None or log.events_before_resume is None:
            return None
        return log.resume_event_count >= log.events_before_resume

    @property
    def store_cost(self) -> CostGrowth | None:
        """How a fill's cost to a database store grew from its first turns to its last."""
        return cost_growth(self.actions)

    @property
    def substituted(self) -> str | None:
        """How the versions that ran differ from those the step asks for, if they do."""
        if self.ready is None:
            return None
        wrong = []
        if self.asked_runtime and self.ready.runtime_version != self.asked_runtime:
            wrong.append(f"asked for runtime {self.asked_runtime}, ran {self.ready.runtime_version}")
        if self.asked_sdk and self.ready.sdk_version != self.asked_sdk:
            wrong.append(f"asked for SDK {self.asked_sdk}, ran {self.ready.sdk_version}")
        return "; ".join(wrong) or None


@dataclass(frozen=True)
class TurnJudgement:
    scenario: str
    kind: TurnKind | NoTurn
    turn: int | None  # numbered across the scenario; None when the turn never happened
    step: StepFacts | None
    answer: str | None = None
    fact_reached_model: FactSeen = FactSeen.UNCHECKED
    verdict: Verdict | None = None  # None for a tell the app saw succeed that nothing later contradicts
    reason: str = ""
    evidence: Basis | None = None
    expectations: tuple[Expectation, ...] = ()
    session: str | None = None  # the session the turn was taken in, as the worker reported it
    # When the verdict rested on a time-out (the app gave up waiting): the times it rested
    # on, e.g. "no answer within 20 s; the session's log has the answer at +1.3 s".
    timed: str | None = None
    # Where the witness found the fact in the turn's requests (FactPlace values, in its
    # order): whom a kept answer is owed to, the session's history or something else.
    fact_in: tuple[str, ...] = ()

    @property
    def as_expected(self) -> bool | None:
        """False if any expectation was contradicted, None if some could not be checked
        (or nothing is expected), True if all held."""
        if not self.expectations:
            return None
        met = [e.met for e in self.expectations]
        if False in met:
            return False
        return None if None in met else True


@dataclass(frozen=True)
class ScenarioJudgement:
    name: str
    title: str
    proves: str
    does_not_prove: str
    seconds: float
    turns: tuple[TurnJudgement, ...]
    skipped: str | None = None
    crashed: str | None = None
    recoveries: tuple[Recovery, ...] = ()


@dataclass(frozen=True)
class Recovery:
    """A fault that healed, and how long after its heal the session was resumed again
    (None: no later resume succeeded)."""

    kind: str
    step: str
    seconds: float | None


@dataclass(frozen=True)
class RunJudgement:
    run_id: str
    fact: str
    scenarios: tuple[ScenarioJudgement, ...]

    @property
    def turns(self) -> list[TurnJudgement]:
        return [turn for scenario in self.scenarios for turn in scenario.turns]

    @property
    def silent_losses(self) -> list[TurnJudgement]:
        return [t for t in self.turns if t.verdict == Verdict.LOST_SILENTLY]

    @property
    def contradicted(self) -> list[TurnJudgement]:
        return [t for t in self.turns if t.as_expected is False]

    @property
    def unjudged(self) -> list[TurnJudgement]:
        """Turns that could not be judged (unknown, failed loudly, or a crashed scenario)
        where the scenario did not expect exactly that."""
        return [t for t in self.turns if t.verdict in (Verdict.UNKNOWN, Verdict.FAILED_LOUDLY, Verdict.CRASHED)
                and t.as_expected is not True]

    @property
    def judged(self) -> list[TurnJudgement]:
        """Turns whose expectations were checked, with whatever result."""
        return [t for t in self.turns if t.as_expected is not None]

    def exit_code(self) -> ExitCode:
        if self.contradicted:
            return ExitCode.CONTRADICTED
        if self.unjudged or not self.judged:
            return ExitCode.UNJUDGED
        return ExitCode.AS_EXPECTED
