"""What a run produced: plain records, kept as data so the checker and the report are
pure functions of them (and ``--json`` can write them out whole)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from handoff.witness.server import Evidence


@dataclass
class StepResult:
    scenario: str
    step: str
    host: str
    home: str  # "shared", "own" or "copied"
    session_id: str | None
    store: str = "home"  # or "sqlite" / "postgres": session files in a database
    events: list[dict[str, Any]] = field(default_factory=list)
    exit_code: int | None = None
    killed_on_purpose: bool = False  # the scenario asked for a crash here
    timed_out: bool = False
    stderr_tail: str = ""

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == kind]

    def first(self, kind: str) -> dict[str, Any] | None:
        found = self.of(kind)
        return found[0] if found else None

    @property
    def finished(self) -> bool:
        return self.first("finished") is not None

    @property
    def ready(self) -> dict[str, Any]:
        return self.first("ready") or {}

    @property
    def reported_session_id(self) -> str | None:
        """The id the worker ended up using (it may have been chosen by the runtime)."""
        ids = [e["session_id"] for e in self.events if e.get("session_id")]
        return ids[-1] if ids else self.session_id


@dataclass
class ScenarioResult:
    name: str
    title: str
    proves: str
    does_not_prove: str
    fact: str
    steps: list[StepResult] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    seconds: float = 0.0
    skipped_reason: str | None = None
