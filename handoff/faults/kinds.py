"""The fault kinds a scenario may name, as rules the scenario loader checks: where each
can strike, what it may be aimed at, whether it heals. Only data here (no processes, no
I/O), so the loader can say what is wrong with a fault before anything starts; what each
kind does is in the modules beside this one."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from handoff.words import FaultKind, FaultPoint

EVERY_POINT = tuple(FaultPoint)  # (a fault of the database server can strike anywhere)
AFTER_STEP = "after-step"  # heal when the step ends


class Needs(StrEnum):
    """What a fault kind needs of its scenario."""

    POSTGRES = "postgres"  # the run's throwaway PostgreSQL server, which it stops
    SIMULATED_HOST = "simulated host"  # a host with a network of its own to cut
    COPIED_HOME = "copied home"  # a home the coordinator copies, to cut the copy short


@dataclass(frozen=True)
class KindRules:
    points: tuple[FaultPoint, ...]  # the first is the default
    targets: tuple[str, ...] = ()  # the first is the default; empty: the kind takes no target
    heals: bool = True
    needs: Needs | None = None
    options: dict[str, tuple[type, float, float]] = field(default_factory=dict)  # name -> (type, least, most)
    on_container: bool = False  # whether it may strike a step on a container host
    says: str = ""


KINDS: dict[FaultKind, KindRules] = {
    FaultKind.KILL: KindRules(
        (FaultPoint.AFTER_TURN, FaultPoint.MID_TURN, FaultPoint.INSIDE_WRITE, FaultPoint.INSIDE_TOOL,
         FaultPoint.INSIDE_PERMISSION, FaultPoint.HOLD),
        ("worker", "app"),
        heals=False,
        says="SIGKILL: 'worker' kills the worker and its runtime at once (a machine or container dies), 'app' only "
             "the process holding the SDK client"),
    FaultKind.KILL_RUNTIME: KindRules(
        (FaultPoint.MID_TURN, FaultPoint.AFTER_TURN, FaultPoint.HOLD), heals=False,
        says="SIGKILL to the runtime alone; the app (the worker) lives on"),
    FaultKind.STORE_OUTAGE: KindRules(
        EVERY_POINT, needs=Needs.POSTGRES, on_container=True,
        says="the run's PostgreSQL server is shut down (fast shutdown), and started again at heal"),
    FaultKind.STORE_RESTART: KindRules(
        EVERY_POINT, heals=False, needs=Needs.POSTGRES,
        says="the run's PostgreSQL server is shut down (fast shutdown) and started again on the same data and port "
             "before the step goes on: the server is back, every connection that was open to it is gone"),
    FaultKind.PARTITION: KindRules(
        EVERY_POINT, ("database", "model", "everything"), needs=Needs.SIMULATED_HOST,
        says="the step's simulated host loses its route to the database, the model or everything (connections "
             "refused with a TCP reset), restored at heal"),
    FaultKind.DISK_FULL: KindRules(
        (FaultPoint.BEFORE_STEP, FaultPoint.MID_TURN, FaultPoint.AFTER_TURN, FaultPoint.HOLD),
        says="the step's home is a small file system of its own, filled up; the filler is removed at heal"),
    FaultKind.TEAR_LOG: KindRules(
        (FaultPoint.BEFORE_STEP,), heals=False, options={"cut": (int, 1, 10**6)},
        says="events.jsonl loses its last bytes (default: half of its last line), as a crash mid-append on a file "
             "system leaves it"),
    FaultKind.CORRUPT_LOG: KindRules(
        (FaultPoint.BEFORE_STEP,), heals=False, options={"line": (int, 1, 10**6)},
        says="one line of events.jsonl (default: the middle one) is no longer JSON"),
    FaultKind.CUT_COPY: KindRules(
        (FaultPoint.BEFORE_STEP,), heals=False, needs=Needs.COPIED_HOME, options={"events": (int, 0, 10**6)},
        says="the copy of the session's folder stops part way: the first 'events' events of events.jsonl arrive "
             "whole (default: half of them), then half of the next"),
    FaultKind.TAMPER: KindRules(
        (FaultPoint.BEFORE_STEP,), heals=False,
        says="the stored fact is edited in the log, as someone with write access could"),
}


def stops_the_database(scenario) -> bool:
    """Whether a scenario's faults stop its PostgreSQL server (it then gets one of its own)."""
    return any(KINDS[plan.kind].needs == Needs.POSTGRES for step in scenario.steps for plan in step.faults)
