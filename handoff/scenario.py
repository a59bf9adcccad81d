"""Scenarios as data: what a scenario file says (scenario_files.py reads and checks one).

A scenario is a TOML file in ``scenarios/``; its name is the file's stem. Example::

    title = "Cross process"
    order = 30
    proves = "..."
    does_not_prove = "..."
    proves_in_short = "..."            # optional: a few words each, for the terminal's
    does_not_prove_in_short = "..."    # one line per rung ("<name> proved ..., not ...")

    [[steps]]
    name = "A"
    actions = ["create", "tell", "close"]

    [[steps]]
    name = "B"
    actions = ["resume", "ask", "close"]
    expect = "kept"

Every step runs in a new worker process. ``home`` says where its runtime keeps
sessions: ``shared`` (one home for the whole scenario), ``own`` (a new, empty one) or
``copied`` (a new one into which the coordinator copies the session's state from the
previous step's home, as rsync would). On a container host a home is an engine volume:
``shared`` one named volume for the scenario, ``own`` a new named volume, ``anonymous``
an anonymous volume that lives and dies with the step's container; ``restart = true``
starts the host's previous container again instead of a new one. ``session`` says which
id the step gets: ``passed`` (the one the previous steps used), ``unknown`` (a fresh id
that was never created) or ``scenario`` (the scenario's own ``session_id`` as written,
e.g. what another principal guesses). ``host`` names where the step runs: ``local``
(default) or a name from the scenario's ``[hosts]`` table, whose value is the kind:
``namespace``, ``ssh`` or ``container``.
The scenario's ``store`` says where session files go: ``home`` (the runtime's home
directory, the default), or a database reached through the SDK's SessionFs provider,
``sqlite`` (a file, one machine) or ``postgres`` (a server every host can reach).
``provider = "omitted"`` starts the step's runtime without the model's settings (the
provider, or the Copilot token), which a session does not store.
``runtime = "1.0.92"`` and ``sdk = "1.0.24"`` run a step (on host ``local``) with another
installed runtime or SDK version (handoff/versions.py); ``sdk = "node@1.0.14"`` runs it
on the Node.js worker (sdks/node/), which does the raw SDK's actions only. A scenario
needing one that is not installed is skipped with the command that installs it.
``after = "lease-expired"`` starts a guarded step only once the coordinator has let the
session's lease run out on its lease clock, the time guarded workers take and judge leases
at: it stands still while a worker starts, so a lease never expires because a runtime was
slow to start, and moves only when a step asks for it.
``filler_turns = 199`` with the action ``fill`` makes a long history: that many turns
about another topic, not judged. ``tags = ["slow"]`` keeps a long scenario out of
``handoff run``'s ladder (``--slow`` and ``make handoff`` run it).
At the top, ``turn_timeout`` is how long the SDK waits for an answer (default 60 s), and
``known_good = ["1.0.102 -> 1.0.92"]`` declares resumes the guard lets through although
the resuming runtime is older than the session's last writer.
A step's ``[[steps.faults]]`` tables are the faults the coordinator injects into it
(handoff/faults/kinds.py lists the kinds): ``kind``, ``at`` (before-step, mid-turn,
after-turn, inside-write), ``turn`` (which of the step's turns), ``heal`` ("after-step",
the default, or a number of seconds after the injection), ``target`` and the kind's own
options. ``expect_tell`` says what the step's tells are expected to come to: ``told``
(the app saw them succeed), ``failed-loudly`` (the app was told they failed),
``lost-silently`` (the app saw them succeed, and a later resume of the session did not
have them: a finding, shown as such) or ``unknown``. Left out, a tell is expected to be
told, and an undeclared silent loss contradicts the scenario.
Where the SDK's two paths to a model teach different things (a resume without the model
settings keeps the session's model on the Copilot API, and has none on BYOK), a step's
``[steps.copilot-api]`` or ``[steps.byok]`` table gives its ``expect`` and ``expect_tell``
on that path; a run judges each step by its own path's (Scenario.on_path).
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field, replace

from handoff.words import Action, BrowserKeeps, HomeKind, HostKind, StepProvider, StepSession, StoreKind, Verdict

# What a step can wait for before it starts. The coordinator decides when it has passed,
# on its own clock, so no verdict depends on how long a process took to start.
# A step's name and a scenario's (its file's stem) name directories and files of the run
# (<run>/<scenario>/home-<step>, worker-<step>.stderr) and travel in the model requests'
# headers: plain ASCII, no separators, no dots, no control characters.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
NAME_RULE = "1 to 40 ASCII letters, digits, '-' or '_', the first a letter or digit"
LEASE_EXPIRED = "lease-expired"  # the session's lease has run out on the coordinator's lease clock
AFTER = (LEASE_EXPIRED,)
# A tagged scenario runs only when its tag is asked for: "faults" by handoff run --faults,
# "slow" (a long one, kept out of the quick ladder) by handoff run --slow and make handoff.
TAGS = ("faults", "slow")


@dataclass(frozen=True)
class FaultPlan:
    """One fault of a step, as the scenario file states it (handoff/faults/ does it)."""

    kind: str
    at: str
    turn: int = 1
    heal: float | None = None  # seconds after the injection; None: when the step ends (or never, for a kill)
    target: str | None = None
    cut: int | None = None  # tear-log: bytes cut off the end
    line: int | None = None  # corrupt-log: the line made unreadable
    events: int | None = None  # cut-copy: how many whole events of events.jsonl arrive


@dataclass(frozen=True)
class PathExpectation:
    """What a step expects on one path to a model (Backend.path: the Copilot API or BYOK),
    where that differs from what its own fields say."""

    path: str
    expect: str | tuple[str, ...] | None = None  # None: the step's own
    expect_tell: str | None = None  # None: the step's own
    calls: tuple[str, ...] | None = None  # None: the step's own


@dataclass(frozen=True)
class Step:
    name: str
    actions: tuple[str, ...]
    home: str = HomeKind.SHARED
    session: str = StepSession.PASSED
    host: str = HostKind.LOCAL  # a name from the scenario's hosts, or "local"
    principal: str = "alice"  # who the worker acts as
    guarded: bool = False  # through the gate (owners, id rules, receipts, leases) or the raw SDK
    reuse: bool = False  # a guarded create of an existing id continues it
    after: str | None = None  # what the coordinator lets happen before the step starts (AFTER)
    faults: tuple[FaultPlan, ...] = ()  # what the coordinator does to this step (handoff/faults/)
    expect_tell: str | None = None  # what the step's tells are expected to come to (TELL_EXPECTABLE)
    forked: bool | None = None  # expected event-log evidence: does the parentId chain fork?
    expect: str | tuple[str, ...] | None = None  # verdict expected of the step's asks: one for all, or one each
    closed_before_resume: bool | None = None  # expected event-log evidence, when it matters
    provider: str = StepProvider.PASSED  # OMITTED: the runtime gets no model settings, as if the app forgot them
    restart: bool = False  # container hosts: start the host's previous container again
    runtime: str | None = None  # another runtime version than the default (handoff/versions.py)
    sdk: str | None = None  # another SDK version than the default
    loaded_all_events: bool | None = None  # expected event-log evidence: did the resume load every event?
    tools: tuple[str, ...] = ()  # the app's tools (AppTool) the worker registers on create and resume
    # (AppSetting, SettingValue) pairs the worker passes on create and resume; a setting
    # left out is passed as the tool always passes it (the SDK's default, the model named)
    settings: tuple[tuple[str, str], ...] = ()
    summary: str | None = None  # what the witness's compaction summary keeps (Summary); None: keep
    filler_turns: int = 0  # how many turns each "fill" action takes (a long history)
    flat_store_cost: bool | None = None  # expected of a fill through a database store: cost per turn flat?
    on_paths: tuple[PathExpectation, ...] = ()  # what it expects instead on one path to a model
    # The kinds of call (CallKind) its runtime is expected to make to the service besides
    # its chats, none of them carrying the fact or the session's id; None: not judged.
    calls: tuple[str, ...] | None = None
    # A browser, by name: the step is done as a person does it in `handoff chat`'s page, in
    # that browser's profile (its localStorage and login), which later steps naming the
    # same device continue (handoff/chat/worker.py). None: the app calls the SDK itself.
    device: str | None = None
    keeps: str = BrowserKeeps.SESSION_ID  # with a device: what its page keeps in the browser

    def on_path(self, path: str) -> Step:
        """The step as a run on ``path`` judges it."""
        found = next((on for on in self.on_paths if on.path == path), None)
        if found is None:
            return self
        return replace(self, expect=self.expect if found.expect is None else found.expect,
                       expect_tell=found.expect_tell or self.expect_tell,
                       calls=self.calls if found.calls is None else found.calls)

    @property
    def asks(self) -> bool:
        return Action.ASK in self.actions or Action.CONCURRENT_RESUME_AND_ASK in self.actions

    @property
    def ask_count(self) -> int:
        return sum(1 for action in self.actions if action in (Action.ASK, Action.CONCURRENT_RESUME_AND_ASK))

    def expected(self, index: int) -> str | None:
        """The verdict expected of the step's ``index``-th ask (from 0)."""
        if isinstance(self.expect, tuple):
            return self.expect[index] if index < len(self.expect) else None
        return self.expect

    @property
    def tells(self) -> bool:
        return any(action in (Action.TELL, Action.LOOK_UP, Action.CONCURRENT_RESUME_AND_ASK) for action in self.actions)

    @property
    def waits_out_a_turn(self) -> bool:
        """An ask whose answer is expected never to arrive: the step sits out the turn time-out."""
        return Verdict.UNDELIVERED in (self.expect if isinstance(self.expect, tuple) else (self.expect,))


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    proves: str
    does_not_prove: str
    steps: tuple[Step, ...]
    order: int = 1000
    session_id: str | None = None  # a fixed id, as an app with stable ids would use
    hosts: dict[str, str] = field(default_factory=dict)  # name -> kind, besides "local"
    store: str = StoreKind.HOME  # where session files go: the runtime's home, or a database via SessionFs
    path: str | None = None  # the file it was loaded from
    turn_timeout: float = 60.0  # seconds the SDK waits for each answer
    known_good: tuple[tuple[str, str], ...] = ()  # (last writer, resumer) downgrades the guard lets through
    # A few words each, for the terminal's one line per scenario; the full texts above are
    # in the wide table, the Markdown and the HTML report.
    proves_in_short: str = ""
    does_not_prove_in_short: str = ""
    tags: tuple[str, ...] = ()  # e.g. "faults": run only when asked for (handoff run --faults)

    def on_path(self, path: str) -> Scenario:
        """The scenario as a run on ``path`` (Backend.path) judges it: each step expecting
        what it expects there."""
        return replace(self, steps=tuple(step.on_path(path) for step in self.steps))

    @property
    def host_kinds(self) -> set[str]:
        return {self.hosts[step.host] for step in self.steps if step.host != HostKind.LOCAL}
