"""What a lab run did, kept in the worker protocol's events, so that a lab run is stored
and judged exactly as a scenario's step is (`handoff runs`, `handoff report`).

A lab run is one process doing one step: its SDK calls become ``action`` events, its
turns ``turn`` events, its failures ``error`` events, each with the pid and host of the
process that made it (in ``ready``). The witness's records of its requests, tagged like a
worker's, say whether the fact reached the model. The step's actions are the calls as
they were made, and every question in it is expected to be answered from turn 1.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from handoff.eventlog import events_path, report
from handoff.fact import Fact
from handoff.guard.ids import shown
from handoff.protocol import (
    ActionDone,
    ActionFailed,
    Backend,
    Finished,
    Ready,
    Turn,
    encode,
)
from handoff.runs.record import (
    RunOptions,
    RunRecord,
    ScenarioRecord,
    StepRecord,
    new_run_id,
    this_machine,
)
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Evidence
from handoff.words import Action, Command, HomeKind, HostKind, StoreKind, TurnKind, Verdict
from handoff.worker.sdk import SDK_VERSION

STEP = "lab"
PROVES = {
    "full": "A closed session, resumed by id in the same process, still carries turn 1: resume-after-close.",
    "resume": "A session created by an earlier process is resumed by id in this new process, with a new runtime, "
              "from the same home, and still carries turn 1: a resume across a process boundary.",
}
DOES_NOT_PROVE = ("Restart recovery on another machine, or cross-device handoff: one machine's disk and one runtime "
                  "version served every turn.")


class Recorder:
    def __init__(self, home: str, fact: Fact, backend: Backend, resuming: bool):
        self.started = time.time()
        self.run_id = new_run_id(self.started)
        self.home = home
        self.fact = fact
        self.backend = backend
        self.resuming = resuming
        self.lines: list[str] = []
        self.actions: list[str] = []
        self.session_id: str | None = None
        self.turns = 0
        self.runtime_version: str | None = None

    @property
    def _shown_id(self) -> str | None:
        """The id as the record keeps it: never one that looks like a secret."""
        return None if self.session_id is None else shown(self.session_id)

    def _emit(self, event) -> None:
        self.lines.append(encode(event).decode().rstrip("\n"))

    def ready(self, runtime_version: str, start_ms: int) -> None:
        self.runtime_version = runtime_version
        self._emit(Ready(t=time.time(), pid=os.getpid(), hostname=socket.gethostname(), address=None, home=self.home,
                         runtime_version=runtime_version, sdk_version=SDK_VERSION, runtime_start_ms=start_ms))

    def next_turn(self) -> int:
        """The number of the turn about to be sent (the step's turns count from 1)."""
        return self.turns + 1

    def turn(self, kind: TurnKind, prompt: str, answer: str | None, ms: int) -> None:
        self.turns += 1
        self.actions.append(kind)
        self._emit(Turn(t=time.time(), turn=self.turns, kind=kind, session_id=self._shown_id, prompt=prompt,
                        answer=answer, ms=ms))

    def action(self, action: str, ms: int, **detail) -> None:
        self.actions.append(action)
        self._emit(ActionDone(t=time.time(), action=action, session_id=self._shown_id, ms=ms, **detail))

    def failed(self, action: str, message: str, ms: int) -> None:
        self.actions.append(action)
        self._emit(ActionFailed(t=time.time(), action=action, message=message, ms=ms))

    def finish(self, ok: bool) -> None:
        if self.session_id:
            path = events_path(Path(self.home), self.session_id)
            self._emit(report(self._shown_id, path.read_bytes() if path.is_file() else None))
        self._emit(Finished(t=time.time(), ok=ok))

    def record(self, evidence: list[Evidence]) -> RunRecord:
        asks = Action.ASK in self.actions
        step = Step(STEP, tuple(self.actions), expect=Verdict.KEPT if asks else None)
        scenario = Scenario("lab", "Lab 05: sessions (handoff lab)", PROVES["resume" if self.resuming else "full"],
                            DOES_NOT_PROVE, (step,))
        step_record = StepRecord(STEP, HostKind.LOCAL, HomeKind.SHARED, StoreKind.HOME, self._shown_id,
                                 lines=self.lines, exit_code=0, started_at=self.started, ended_at=time.time())
        mine = [e for e in evidence if e.scenario == self.run_id]
        scenario_record = ScenarioRecord("lab", scenario, [step_record], mine, seconds=time.time() - self.started)
        options = RunOptions(self.fact.value, self.fact.topic, 1, self.backend)
        return RunRecord(self.run_id, Command.LAB, self.started, time.time(), this_machine(self.runtime_version),
                         options, [scenario_record])
