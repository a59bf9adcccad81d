"""`handoff lab --show-calls`: the SDK call behind each line of the transcript, written
as the lab's sessions_sample.py writes it, and the process that made it.

The point for a learner is where things happen: every call below is made by this one
process (its pid and host are on each line), and a `--resume` run is a different process
from the one that created the session, which the lab can show from the stored runs
(handoff/lab/recorder.py keeps each lab run's pid and host).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from typing import Iterable

from handoff.guard.ids import shown
from handoff.protocol import COPILOT, WITNESS_COPILOT_API, Backend
from handoff.runs.record import RunRecord
from handoff.words import Action, Command


@dataclass(frozen=True)
class Creator:
    """The lab run that created a session: which process, on which host."""

    run_id: str
    pid: int
    hostname: str


@dataclass(frozen=True)
class Calls:
    backend: Backend
    provider_url: str | None = None  # where the runtime sends requests (the witness, or its relay)
    pid: int = field(default_factory=os.getpid)
    hostname: str = field(default_factory=socket.gethostname)

    @property
    def here(self) -> str:
        return f"pid {self.pid} on {self.hostname}"

    def line(self, call: str) -> str:
        return f"  sdk: {call}   [{self.here}]"

    def _settings(self, creating: bool) -> str:
        """The model settings a create or resume is given (a session does not store a
        provider: BYOK passes it every time). On the Copilot API the client was made with
        no argument (runtime, service and token from the environment) and a resume is
        given nothing: the session keeps its model."""
        if self.backend.kind == WITNESS_COPILOT_API:
            return f", model={self.backend.model!r}" if creating else ""
        if self.backend.kind == COPILOT:
            return f", model={self.backend.model!r}, no provider: the Copilot service, github_token from the client"
        return (f", model={self.backend.model!r}, provider={{'type': 'openai', 'base_url': '{self.provider_url}', "
                f"'api_key': …}}")

    def create(self, session_id: str) -> str:
        return self.line(f"client.create_session(session_id={shown(session_id)!r}{self._settings(creating=True)})")

    def resume(self, session_id: str) -> str:
        return self.line(f"client.resume_session({shown(session_id)!r}{self._settings(creating=False)})")

    def send(self) -> str:
        return self.line("session.send_and_wait(prompt)")

    def close(self) -> str:
        return self.line("session.disconnect()   (what leaving `async with session:` does)")

    def metadata(self, session_id: str) -> str:
        return self.line(f"client.get_session_metadata({shown(session_id)!r})")

    def list(self) -> str:
        return self.line("client.list_sessions()")

    def created_by(self, creator: Creator | None) -> str:
        """Which process created the session this run resumes, against this one."""
        if creator is None:
            return f"  created by: no stored lab run created this id, so its process is not known (this is {self.here})"
        other = "a different process" if (creator.pid, creator.hostname) != (self.pid, self.hostname) else \
            "the same pid (a reused pid: the creating run has ended)"
        return (f"  created by: pid {creator.pid} on {creator.hostname} (lab run {creator.run_id}); this resume is "
                f"{self.here}: {other}")


def created_by(session_id: str, records: Iterable[RunRecord]) -> Creator | None:
    """The newest stored lab run whose process created ``session_id`` (as its record shows
    the id: one that looks like a secret is never stored, so it is never found)."""
    for record in records:
        if record.command != Command.LAB:
            continue
        for scenario in record.scenarios:
            for step in scenario.steps:
                view = step.view()
                if view.ready and any(a.action == Action.CREATE and a.session_id == session_id for a in view.actions):
                    return Creator(record.id, view.ready.pid, view.ready.hostname)
    return None
