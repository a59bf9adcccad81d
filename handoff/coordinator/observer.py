"""Who is told, while a run goes on, that a scenario started or ended.

The coordinator never prints: whoever wants to show progress (the CLI's live display,
a benchmark) passes an observer in :class:`RunSettings`. The calls come from the run's
event loop thread, one at a time, so an observer needs no locking of its own; it must
return quickly, since the scenarios wait while it runs.
"""

from __future__ import annotations

from typing import Protocol

from handoff.runs.record import ScenarioRecord
from handoff.scenario import Scenario


class RunObserver(Protocol):
    def run_started(self) -> None:
        """The run's inputs passed their checks (the runtime is there, the model answers):
        the run starts. Nothing is said before this, so bad input is one line alone."""

    def scenario_started(self, scenario: Scenario) -> None:
        """The scenario took a slot and starts (or is found not runnable: it ends at once)."""

    def scenario_finished(self, record: ScenarioRecord) -> None:
        """The scenario ended; ``record`` is what it observed (skipped and crashed included)."""


class Unobserved:
    """The observer of a run nobody watches."""

    def run_started(self) -> None:
        pass

    def scenario_started(self, scenario: Scenario) -> None:
        pass

    def scenario_finished(self, record: ScenarioRecord) -> None:
        pass
