"""One cross-process handoff done the coordinator's way, without the coordinator:
process A (``python -m handoff.worker``) creates a session, tells the fact and closes;
process B, a new worker, resumes the same id, asks and closes. Each worker is fed a
``WorkerSpec`` as JSON on stdin and reports JSON events, exactly as under ``handoff run``
(the spec is built by the coordinator's own ``worker_spec``), so the stores and scale benchmarks measure
the tool's own worker and runtime path without the CLI, report or per-run witness.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from handoff.coordinator.specs import worker_spec
from handoff.fact import Fact
from handoff.hosts import LocalHost
from handoff.protocol import Backend
from handoff.scenario import Step

from bench.procs import Bench, WorkerRun


@dataclass
class Handoff:
    label: str
    session_id: str
    a: WorkerRun
    b: WorkerRun | None
    wall_ms: float
    fact: Fact

    @property
    def answer(self) -> str | None:
        turn = self.b.turn() if self.b else None
        return turn.answer if turn else None

    @property
    def kept(self) -> bool:
        return bool(self.b) and self.a.ok and self.b.ok and self.fact.is_in(self.answer)

    @property
    def problem(self) -> str:
        if self.kept:
            return ""
        for name, run in (("A", self.a), ("B", self.b)):
            if run is None:
                return f"{self.label}: step {name} never ran"
            if run.errors:
                return f"{self.label}: step {name}: {run.errors[0]}"
            if not run.ok:
                return (f"{self.label}: step {name} exited {run.finished.exit_code}"
                        f"{' (timed out)' if run.finished.timed_out else ''}: {run.finished.stderr_tail.strip()[-200:]}")
        return f"{self.label}: the answer {self.answer!r} does not name {self.fact.value!r}"


def _spec(bench: Bench, witness: str, label: str, step: str, home: Path, session_id: str,
          actions: tuple[str, ...], fact: Fact, store: str | None) -> bytes:
    host = LocalHost("local")  # only asked what it can do: bench starts its workers itself
    return worker_spec(label, Step(step, actions), host, str(home), session_id, fact=fact, backend=Backend(),
                       runtime_path=str(bench.runtime_path), witness_url=witness, store_url=store).to_json()


async def worker_handoff(bench: Bench, witness: str, label: str, fact: Fact, home_a: Path, home_b: Path,
                         store: str | None = None, on_spawn=None, forked: bool = False) -> Handoff:
    session_id = f"bench-{uuid.uuid4().hex[:18]}"
    started = time.monotonic()
    spec_a = _spec(bench, witness, label, "A", home_a, session_id, ("create", "tell", "close"), fact, store)
    a = await bench.worker(spec_a, on_spawn=on_spawn, forked=forked)
    b = None
    if a.ok:
        spec_b = _spec(bench, witness, label, "B", home_b, session_id, ("resume", "ask", "close"), fact, store)
        b = await bench.worker(spec_b, on_spawn=on_spawn, forked=forked)
    return Handoff(label, session_id, a, b, (time.monotonic() - started) * 1000, fact)
