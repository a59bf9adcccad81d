"""Benchmark 7: what resuming on another runtime or SDK version costs, next to the same version.

Each round runs one cross-process handoff in every case below, one after another: process
A creates a session, tells the fact and closes; a new process B resumes it from the same
home, asks and closes. Only B differs between the cases, so B is what is compared:

* **same version** — A and B on the default pair (runtime 1.0.102, SDK 1.0.25);
* **upgrade** — A on the newest installed runtime older than the default, B on the default;
* **downgrade** — A on the default, B on that older runtime (B loads fewer events: it
  skips the event types it does not know);
* **other SDK** — A on the default pair, B on the default runtime driven by another
  installed SDK, started from that SDK's own virtual environment.

Every worker is a new interpreter here (``python -m handoff.worker``, the bench does not
fork), so an SDK's import cost is in every row alike. Ratios are B's wall time against
the same-version B of the same round. A round before the measured ones warms each
runtime's unpack cache and the page cache. Versions come from `make runtimes`; a case
whose version is not installed is left out, and the section says so.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from handoff import versions
from handoff.coordinator.placement import step_versions
from handoff.coordinator.specs import worker_spec
from handoff.fact import Fact
from handoff.hosts.local import LocalHost
from handoff.protocol import Backend, EventLog, Finished, Ready
from handoff.scenario import Step

from bench.procs import Bench, WorkerRun
from bench.report import Section, Table
from bench.stats import Summary, fmt

SAME = "same version"


@dataclass(frozen=True)
class Case:
    name: str
    created: tuple[str, str]  # runtime, SDK of process A
    resumed: tuple[str, str]  # runtime, SDK of process B


@dataclass
class Measured:
    resumers: list[WorkerRun] = field(default_factory=list)  # process B of each round
    problems: list[str] = field(default_factory=list)


def cases() -> tuple[list[Case], list[str]]:
    """The cases the installed versions allow, and why any other is left out."""
    default = (versions.DEFAULT_RUNTIME, versions.DEFAULT_SDK)
    chosen, missing = [Case(SAME, default, default)], []
    older = [v for v in versions.installed_runtimes() if versions.older(v, versions.DEFAULT_RUNTIME)]
    if older:
        previous = (older[-1], versions.DEFAULT_SDK)
        chosen += [Case(f"upgrade: runtime {older[-1]} → {default[0]}", previous, default),
                   Case(f"downgrade: runtime {default[0]} → {older[-1]}", default, previous)]
    else:
        missing.append(f"no runtime older than {default[0]} is installed (`{versions.INSTALL_COMMAND}`): "
                       "no upgrade or downgrade rows")
    others = [v for v in versions.installed_sdks() if v != versions.DEFAULT_SDK]
    if others:
        chosen.append(Case(f"other SDK: {default[1]} → {others[0]}", default, (default[0], others[0])))
    else:
        missing.append(f"no SDK other than {default[1]} is installed (`{versions.INSTALL_COMMAND}`): no SDK row")
    return chosen, missing


async def _worker(bench: Bench, witness: str, label: str, name: str, pair: tuple[str, str], home: Path,
                  session_id: str, actions: tuple[str, ...], fact: Fact) -> WorkerRun:
    step = Step(name, actions, runtime=pair[0], sdk=pair[1])
    launch, runtime_path = step_versions(step)
    spec = worker_spec(label, step, LocalHost("local"), str(home), session_id, fact=fact, backend=Backend(),
                       runtime_path=str(runtime_path or bench.runtime_path), witness_url=witness)
    return await bench.worker(spec.to_json(), launch=launch)


async def _handoff(bench: Bench, witness: str, case: Case, fact: Fact, measured: Measured | None) -> None:
    label = f"versions-{uuid.uuid4().hex[:8]}"
    home, session_id = bench.new_dir("versions-home"), f"bench-{uuid.uuid4().hex[:18]}"
    a = await _worker(bench, witness, label, "A", case.created, home, session_id, ("create", "tell", "close"), fact)
    if not a.ok:
        if measured is not None:
            measured.problems.append(f"{case.name}: process A failed: {(a.errors or ['no finished line'])[0]}")
        return
    b = await _worker(bench, witness, label, "B", case.resumed, home, session_id, ("resume", "ask", "close"), fact)
    if measured is None:
        return
    turn = b.turn()
    if not (b.ok and turn and fact.is_in(turn.answer)):
        measured.problems.append(f"{case.name}: process B did not answer with the fact: "
                                 f"{(b.errors or [repr(turn.answer if turn else None)])[0]}")
        return
    measured.resumers.append(b)


def _cpu(run: WorkerRun) -> float | None:
    done = run.first(Finished)
    return done.cpu_s.worker + done.cpu_s.runtime if done and done.cpu_s else None


def _loaded(run: WorkerRun) -> str:
    log = run.first(EventLog)
    if log is None or log.resume_event_count is None:
        return "—"
    return f"{log.resume_event_count} of {log.events_before_resume}"


async def run(bench: Bench, rounds: int, warmup: bool = True) -> Section:
    section = Section("versions", "7. Resuming on another version (cost next to the same version)",
                      method=__doc__.split("\n", 2)[2].strip())
    chosen, missing = cases()
    section.findings.extend(f"not measured: {reason}" for reason in missing)  # not installed is not a failure
    fact, witness = Fact(), await bench.witness()
    measured = {case.name: Measured() for case in chosen}
    if warmup:
        for case in chosen:
            await _handoff(bench, witness, case, fact, None)
    started = time.monotonic()
    for _ in range(rounds):
        for case in chosen:
            await _handoff(bench, witness, case, fact, measured[case.name])
    same = measured[SAME].resumers
    rows = []
    for case in chosen:
        found = measured[case.name]
        section.problems.extend(found.problems)
        resumers = found.resumers
        ratio = Summary.of(b.finished.wall_ms / s.finished.wall_ms for b, s in zip(resumers, same))
        rows.append([
            case.name, f"{case.created[0]}/{case.created[1]}", f"{case.resumed[0]}/{case.resumed[1]}",
            fmt(Summary.of(b.finished.wall_ms for b in resumers)),
            "1" if case.name == SAME else fmt(ratio, "×", 2),
            fmt(Summary.of(b.first(Ready).runtime_start_ms for b in resumers)),
            fmt(Summary.of(b.action_ms("resume") for b in resumers)),
            fmt(Summary.of(b.turn().ms for b in resumers)),
            fmt(Summary.of(_cpu(b) for b in resumers), digits=2),
            _loaded(resumers[-1]) if resumers else "—",
            f"{len(resumers)}/{rounds}",
        ])
        if case.name != SAME and ratio:
            resume = Summary.of(b.action_ms("resume") - s.action_ms("resume") for b, s in zip(resumers, same))
            section.findings.append(f"{case.name}: process B takes {ratio.median:.2f}× the same-version B "
                                    f"(median of {ratio.count} rounds); its resume call differs by "
                                    f"{resume.median:+.0f} ms.")
    section.tables.append(Table(
        ["case", "A runtime/SDK", "B runtime/SDK", "process B, ms", "B vs same version, per round",
         "B runtime start, ms", "B resume, ms", "B ask turn, ms", "B CPU, s", "events B loaded", "kept"], rows,
        caption=f"Median (min–max) of {rounds} rounds ({time.monotonic() - started:.0f} s); every case once per "
                f"round, in the order shown"))
    return section
