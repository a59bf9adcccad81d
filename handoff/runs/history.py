"""A run as its readers take it: each step's events decoded once, joined with what the
witness saw of each of its turns, the faults injected into it and where its turns stand
in its scenario; and the fact whole.

The record (record.py) keeps what was observed as it was observed — a worker's stdout
lines verbatim, the witness's records with the turn as its request's header named it —
so that a later version can read a stored run again. Here it is read once: a step's
lines become the protocol's typed events (``StepRecord.view()``, kept with the step),
the witness's turn becomes the step's own turn number, and each turn has both its
numbers: the step's own, as the worker and the witness count, and the scenario's, as a
judgement and every report show it. The checker, the losses, the HTML page, its
diagrams and the skew grid read a run through this, never through its raw lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from handoff.fact import Fact
from handoff.runs.record import RunRecord, ScenarioRecord, StepEvents, StepRecord
from handoff.witness.evidence import Call, Evidence
from handoff.witness.tags import COMPACTION, is_filler_turn
from handoff.words import turns_in


@dataclass(frozen=True)
class StepHistory:
    """One step of a scenario: what its worker said and what the witness saw of its turns."""

    record: StepRecord
    said: StepEvents  # its worker's events, decoded once (StepRecord.view())
    first_turn: int  # the scenario's number for the step's own turn 1
    requests: dict[int, tuple[Evidence, ...]]  # the witness's records of each turn, by the step's own number
    unreported: tuple[Evidence, ...]  # its records of turns the worker never reported (killed meanwhile), by time
    filler: tuple[Evidence, ...] = ()  # its records of its filler turns (a "fill"), by time: no judged turn's
    # its records of the runtime's compaction requests, by time: they carry no turn header
    # (the runtime sends only the provider's headers with them), and belong to no turn
    compactions: tuple[Evidence, ...] = ()
    calls: tuple[Call, ...] = ()  # its runtime's other requests to the service (models, MCP, GitHub API), by time

    @property
    def name(self) -> str:
        return self.record.step

    def in_scenario(self, turn: int) -> int:
        """The scenario's number for the step's own turn ``turn``."""
        return self.first_turn + turn - 1

    def in_step(self, number: int) -> int:
        """The step's own number for the scenario's turn ``number``."""
        return number - self.first_turn + 1

    def fact_sent(self, turn: int) -> list[bool | None]:
        """For each request the witness recorded of the step's own turn ``turn``: was the
        fact in what the model was sent (None: it was not told which fact to look for)?"""
        return [evidence.fact_sent for evidence in self.requests.get(turn, ())]

    def fact_places(self, turn: int) -> list[tuple[str, ...]]:
        """For each of those requests, where in it the witness found the fact (FactPlace
        values; empty: nowhere, or a record made before the witness said where)."""
        return [evidence.fact_in for evidence in self.requests.get(turn, ())]


@dataclass(frozen=True)
class ScenarioHistory:
    record: ScenarioRecord
    fact: Fact
    steps: tuple[StepHistory, ...]  # one per step record, in the order they ran

    @classmethod
    def of(cls, record: ScenarioRecord, fact: Fact) -> ScenarioHistory:
        steps, first_turn = [], 1
        planned = record.scenario.steps
        seen_by_step: dict[str, list[Evidence]] = {}
        for evidence in record.evidence:  # one pass: a run's evidence is many times its steps
            seen_by_step.setdefault(evidence.step, []).append(evidence)
        calls_by_step: dict[str, list[Call]] = {}
        for call in record.calls:
            calls_by_step.setdefault(call.step, []).append(call)
        for index, step in enumerate(record.steps):
            steps.append(_step(step, first_turn, seen_by_step.get(step.step, []), calls_by_step.get(step.step, [])))
            # the scenario numbers its turns through its steps in order, as the checker pairs them
            first_turn += turns_in(planned[index].actions) if index < len(planned) else 0
        return cls(record, fact, tuple(steps))

    def step(self, name: str) -> StepHistory:
        """The step of that name (a scenario's step names are its own: each is one step)."""
        return next(step for step in reversed(self.steps) if step.name == name)


@dataclass(frozen=True)
class RunHistory:
    record: RunRecord
    fact: Fact
    scenarios: tuple[ScenarioHistory, ...]

    @classmethod
    def of(cls, record: RunRecord) -> RunHistory:
        fact = record.options.fact_told
        return cls(record, fact, tuple(ScenarioHistory.of(scenario, fact) for scenario in record.scenarios))


def _step(record: StepRecord, first_turn: int, evidence: list[Evidence], calls: list[Call]) -> StepHistory:
    said = record.view()
    requests: dict[int, list[Evidence]] = {}
    for seen in evidence:
        number = _turn_number(seen.turn)
        if number is not None:
            requests.setdefault(number, []).append(seen)
    reported = {turn.turn for turn in said.turns}
    filler = sorted((e for e in evidence if is_filler_turn(e.turn)), key=lambda e: e.at)
    compactions = sorted((e for e in evidence if e.interaction == COMPACTION), key=lambda e: e.at)
    unreported = sorted((e for e in evidence if _turn_number(e.turn) not in reported and not is_filler_turn(e.turn)
                         and e.interaction != COMPACTION), key=lambda e: e.at)
    return StepHistory(record, said, first_turn, {turn: tuple(seen) for turn, seen in requests.items()},
                       tuple(unreported), tuple(filler), tuple(compactions), tuple(sorted(calls, key=lambda c: c.at)))


def _turn_number(turn: str | None) -> int | None:
    """The witness's turn (its request header's text) as the step's own turn number, when
    it is a number written as the worker writes one ("2", never "02" or " 2")."""
    try:
        number = int(turn)  # type: ignore[arg-type]  # None is no number either
    except (TypeError, ValueError):
        return None
    return number if str(number) == turn else None
