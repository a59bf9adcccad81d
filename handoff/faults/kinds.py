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
    "cut-copy": KindRules((BEFORE_STEP,), heals=False, needs="copied home", options={"keep": (float, 0.0, 1.0)},
                          says="the copy of the session's folder stops part way: only the first part ('keep', "
                               "default 0.5) of events.jsonl arrives"),
    "tamper": KindRules((BEFORE_STEP,), heals=False,
                        says="the stored fact is edited in the log, as someone with write access could"),
}
