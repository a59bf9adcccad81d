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

from handoff import protocol
from handoff.coordinator.specs import worker_spec
from handoff.fact import Fact
from handoff.hosts.base import Host
from handoff.hosts.local import LocalHost
from handoff.protocol import Backend
from handoff.scenario import Step
from handoff.witness.evidence import read_evidence

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
    def cpu_s(self) -> float:
        """What A's and B's workers report for themselves and their runtimes."""
        total = 0.0
        for run in (self.a, self.b):
            finished = run.first(protocol.Finished) if run else None
            if finished is not None and finished.cpu_s is not None:
                total += finished.cpu_s.worker + finished.cpu_s.runtime
        return total

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


def witness_saw_fact(evidence: Path, labels: set[str]) -> set[str]:
    """The labels whose B turn reached the witness with the fact in the conversation."""
    return {e.scenario for e in read_evidence(evidence) if e.scenario in labels and e.step == "B" and e.fact_sent}


def lost(evidence: Path, handoffs: list[Handoff]) -> list[Handoff]:
    """The handoffs not kept: kept means B's answer names its own fact and the witness saw
    the fact in what B's runtime sent it."""
    witnessed = witness_saw_fact(evidence, {h.label for h in handoffs})
    return [h for h in handoffs if not (h.kept and h.label in witnessed)]


def why_lost(handoff: Handoff) -> str:
    return handoff.problem or f"{handoff.label}: the witness did not see the fact"


def _spec(bench: Bench, witness: str, label: str, step: str, home: Path, session_id: str,
          actions: tuple[str, ...], fact: Fact, store: str | None, host: Host | None) -> bytes:
    # With no host, LocalHost is only asked what it can do: bench starts its workers itself.
    host = host or LocalHost("local")
    return worker_spec(label, Step(step, actions), host, host.home(home), session_id, fact=fact, backend=Backend(),
                       runtime_path=str(bench.runtime_path), witness_url=host.witness_url(witness),
                       store_url=store).to_json()


async def worker_handoff(bench: Bench, witness: str, label: str, fact: Fact, home_a: Path, home_b: Path,
                         store: str | None = None, on_spawn=None, forked: bool = False,
                         hosts: tuple[Host | None, Host | None] = (None, None)) -> Handoff:
    """``hosts``: the simulated hosts A and B run on (None: a process here); each then gets
    its home directory as that host's home."""
    session_id = f"bench-{uuid.uuid4().hex[:18]}"
    started = time.monotonic()
    host_a, host_b = hosts
    spec_a = _spec(bench, witness, label, "A", home_a, session_id, ("create", "tell", "close"), fact, store, host_a)
    a = await bench.worker(spec_a, on_spawn=on_spawn, forked=forked, host=host_a, home=home_a)
    b = None
    if a.ok:
        spec_b = _spec(bench, witness, label, "B", home_b, session_id, ("resume", "ask", "close"), fact, store, host_b)
        b = await bench.worker(spec_b, on_spawn=on_spawn, forked=forked, host=host_b, home=home_b)
    return Handoff(label, session_id, a, b, (time.monotonic() - started) * 1000, fact)
