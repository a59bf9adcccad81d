"""What a worker is asked to do, and the actions it knows.

The coordinator writes one :class:`WorkerSpec` as JSON to the worker's standard input;
the worker answers with JSON lines on its standard output (see ``handoff.worker.events``).
Nothing here imports the SDK, so the coordinator can use it freely.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

# Actions a step may list, in the order it wants them done.
ACTIONS = {
    "create": "create a session with the id the coordinator passes along",
    "create-without-id": "create a session and let the runtime choose its id",
    "resume": "resume the session with the id passed along",
    "resume-most-recent": "list the stored sessions and resume the most recently modified",
    "tell": "turn: ask the model to remember the fact",
    "ask": "turn: ask the model which value was the favourite",
    "close": "close (disconnect) the open session, which writes session.shutdown",
    "metadata": "get_session_metadata for the id passed along",
    "list": "list_sessions",
    "hold": "report 'holding' and wait to be killed (used to simulate a crash)",
    "discover": "take the most recently active session id from the store's registry",
    "crash-mid-append": "turn that is killed inside its first append to the store, before it commits",
    "concurrent-resume-and-ask": "a second runtime resumes the open session and asks; then the first takes a turn",
}
TURN_ACTIONS = {"tell", "ask", "crash-mid-append", "concurrent-resume-and-ask"}
# How many turn numbers an action uses (the concurrent one takes a turn on each runtime).
TURNS_PER_ACTION = {"tell": 1, "ask": 1, "crash-mid-append": 1, "concurrent-resume-and-ask": 2}
OPENING_ACTIONS = {"create", "create-without-id", "resume", "resume-most-recent"}


@dataclass(frozen=True)
class WorkerSpec:
    scenario: str
    step: str
    host: str
    runtime_path: str
    home: str
    witness_url: str
    model: str
    fact_value: str
    fact_topic: str
    actions: tuple[str, ...]
    session_id: str | None = None
    first_turn: int = 1
    tags: dict[str, str] = field(default_factory=dict)
    store: str | None = None  # a database URL: session files go there through SessionFs
    owner: str = "alice"  # the principal this worker acts as, recorded in the registry
    guarded: bool = False  # go through the gate (owner, id rules, receipt, lease) or call the SDK raw
    reuse: bool = False  # a guarded create of an existing id continues it instead of being refused
    registry: str | None = None  # registry database when the session files are not in one
    # The model backend (handoff.backends): its kind and the NAMES of the variables that
    # hold its secrets; the worker reads the values from its own environment.
    backend: str = "witness"
    api_key_env: str | None = None
    token_env: str | None = None
    without_provider: bool = False  # resume with no provider settings, to show they are not stored
    # The values of those variables, only for a worker whose environment cannot carry them
    # (one started over SSH: sshd passes no environment on). They travel on the worker's
    # stdin, never on a command line, and are never written down or shown.
    secrets: dict[str, str] = field(default_factory=dict, repr=False)

    def to_json(self) -> str:
        data = asdict(self)
        if not data["secrets"]:
            del data["secrets"]  # a worker of an older checkout (a real SSH host) still reads it
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> WorkerSpec:
        data = json.loads(text)
        data["actions"] = tuple(data["actions"])
        return cls(**data)
