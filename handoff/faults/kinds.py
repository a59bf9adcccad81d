"""The fault kinds a scenario may name, as rules the scenario loader checks: where each
can strike, what it may be aimed at, whether it heals. Only data here (no processes, no
I/O), so the loader can say what is wrong with a fault before anything starts; what each
kind does is in the modules beside this one."""

from __future__ import annotations

from dataclasses import dataclass, field

BEFORE_STEP = "before-step"  # before the step's worker starts
MID_TURN = "mid-turn"  # turn N's request has reached the model, which has not answered yet
AFTER_TURN = "after-turn"  # turn N has answered
INSIDE_WRITE = "inside-write"  # inside the first append of turn N to a database store, before it commits
HOLD = "hold"  # where the step's actions say "hold" (e.g. after a resume, before any turn)
POINTS = (BEFORE_STEP, MID_TURN, AFTER_TURN, INSIDE_WRITE, HOLD)

AFTER_STEP = "after-step"  # heal when the step ends
NEVER = "never"  # a kill does not heal


@dataclass(frozen=True)
class KindRules:
    points: tuple[str, ...]
    targets: tuple[str, ...] = ()  # the first is the default; empty: the kind takes no target
    heals: bool = True
    needs: str | None = None  # "postgres" (the throwaway server), "simulated host", "copied home"
    options: dict[str, tuple[type, float, float]] = field(default_factory=dict)  # name -> (type, least, most)
    on_container: bool = False  # whether it may strike a step on a container host
    says: str = ""


KINDS: dict[str, KindRules] = {
    "kill": KindRules((AFTER_TURN, MID_TURN, INSIDE_WRITE, HOLD), ("worker", "app"), heals=False,
                      says="SIGKILL: 'worker' kills the worker and its runtime at once (a machine or container "
                           "dies), 'app' only the process holding the SDK client"),
    "kill-runtime": KindRules((MID_TURN, AFTER_TURN, HOLD), heals=False,
                              says="SIGKILL to the runtime alone; the app (the worker) lives on"),
    "store-outage": KindRules((BEFORE_STEP, MID_TURN, AFTER_TURN, INSIDE_WRITE, HOLD), needs="postgres", on_container=True,
                              says="the run's PostgreSQL server is shut down (fast shutdown), and started again at heal"),
    "store-restart": KindRules((BEFORE_STEP, MID_TURN, AFTER_TURN, INSIDE_WRITE, HOLD), heals=False, needs="postgres",
                               says="the run's PostgreSQL server is shut down (fast shutdown) and started again on "
                                    "the same data and port before the step goes on: the server is back, every "
                                    "connection that was open to it is gone"),
    "partition": KindRules((BEFORE_STEP, MID_TURN, AFTER_TURN, INSIDE_WRITE, HOLD), ("database", "model", "everything"),
                           needs="simulated host",
                           says="the step's simulated host loses its route to the database, the model or "
                                "everything (connections refused with a TCP reset), restored at heal"),
    "disk-full": KindRules((BEFORE_STEP, MID_TURN, AFTER_TURN, HOLD),
                           says="the step's home is a small file system of its own, filled up; the filler is "
                                "removed at heal"),
    "tear-log": KindRules((BEFORE_STEP,), heals=False, options={"cut": (int, 1, 10**6)},
                          says="events.jsonl loses its last bytes (default: half of its last line), as a crash "
                               "mid-append on a file system leaves it"),
    "corrupt-log": KindRules((BEFORE_STEP,), heals=False, options={"line": (int, 1, 10**6)},
                             says="one line of events.jsonl (default: the middle one) is no longer JSON"),
    "cut-copy": KindRules((BEFORE_STEP,), heals=False, needs="copied home", options={"events": (int, 0, 10**6)},
                          says="the copy of the session's folder stops part way: the first 'events' events of "
                               "events.jsonl arrive whole (default: half of them), then half of the next"),
    "tamper": KindRules((BEFORE_STEP,), heals=False,
                        says="the stored fact is edited in the log, as someone with write access could"),
}


def stops_the_database(scenario) -> bool:
    """Whether a scenario's faults stop its PostgreSQL server (it then gets one of its own)."""
    return any(KINDS[plan.kind].needs == "postgres" for step in scenario.steps for plan in step.faults)
