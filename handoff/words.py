"""The project's words, each defined once: verdicts and what a scenario may expect, turn
kinds, actions, homes, stores, host kinds, fault kinds and points, and the commands that
store runs.

A leaf: it imports nothing of the project, so the lowest module (the worker protocol)
can use it, and every module that says one of these words takes it from here.

Each value is the string that stands in scenario files, on the worker protocol and in
stored runs (``.state/runs/*/run.json``). A member may be renamed freely; a value may
not: a stored run would no longer read, nor re-judge, the same. A ``StrEnum`` member is
its string (it compares equal to it, and json and msgspec write it as it), so records
and protocol fields keep plain ``str`` types and decode as they always have.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    KEPT = "kept"  # the answer names the fact, and the model was sent it
    LOST = "lost"  # both say it is absent, or the runtime said the session is not there
    UNKNOWN = "unknown"  # the evidence is missing or disagrees: no verdict can be given
    FAILED_LOUDLY = "failed-loudly"  # the runtime told the app the action failed: honest, but nothing measured
    LOST_SILENTLY = "lost-silently"  # a tell the app saw succeed, missing from a later resume of its session
    REFUSED = "refused"  # the guard stopped the step
    NO_PROVIDER = "no-provider"  # the session resumed, but no model was there to ask
    UNDELIVERED = "undelivered"  # the context was kept and the answer is in the log, but the app never received it
    SKIPPED = "skipped"  # the scenario needs something this machine lacks
    CRASHED = "crashed"  # the tool could not finish running the scenario

    @property
    def judged(self) -> bool:
        """A verdict about the session, as opposed to "we could not tell"."""
        return self not in (Verdict.UNKNOWN, Verdict.FAILED_LOUDLY, Verdict.SKIPPED, Verdict.CRASHED)


# The verdicts a scenario file may expect of its questions (``expect``)...
EXPECTABLE = tuple(v.value for v in Verdict if v not in (Verdict.SKIPPED, Verdict.CRASHED, Verdict.LOST_SILENTLY))
# ...and of its tells (``expect_tell``): "told" is a tell the app saw succeed and nothing later contradicted.
TOLD = "told"
TELL_EXPECTABLE = (TOLD, Verdict.FAILED_LOUDLY.value, Verdict.LOST_SILENTLY.value, Verdict.UNKNOWN.value)


class TurnKind(StrEnum):
    """What a turn does (a worker's ``turn`` event, a judged turn)."""

    TELL = "tell"  # the app tells the model the fact to remember
    ASK = "ask"  # the app asks which value it was


class ReplyKind(StrEnum):
    """What the witness model's answer to one request was (an evidence record's ``reply_kind``)."""

    ACKNOWLEDGED = "acknowledged"  # "OK" to a remember prompt, or to a lookup's result that states the fact
    RECALLED = "recalled"  # named the value: the request carried it
    NOT_KNOWN = "not-known"  # the request did not carry it
    OFF_SCRIPT = "off-script"  # not a prompt of the tool's
    TOOL_CALL = "tool-call"  # called the tool a lookup prompt names
    TOOL_FAILED = "tool-failed"  # the tool's result (e.g. the runtime's error for a tool it lacks) states no fact
    SUMMARY = "summary"  # wrote the summary the runtime asked for when it compacted the history


class Summary(StrEnum):
    """What the witness's compaction summary does with the facts of the conversation (the
    ``x-handoff-summary`` header; a real model may do either)."""

    KEEP = "keep"  # states every fact the conversation carried
    DROP = "drop"  # states none


class FactPlace(StrEnum):
    """Where in a request the fact was (an evidence record's ``fact_in``): who is to thank
    when a resumed session names it."""

    USER = "user"  # a user message (the remember prompt, or the runtime quoting it after a compaction)
    TOOL = "tool"  # a tool's result
    SUMMARY = "summary"  # the <summary> block the runtime puts in a user message after compacting
    SYSTEM = "system"  # a system message (e.g. a memory block): not the conversation's history
    ASSISTANT = "assistant"  # the model's own earlier answer
    # A user message, but outside the app's own words (its remember prompt, as sent or as
    # quoted after a compaction) and outside a summary: text the runtime put there, such as
    # memories in user-prompt mode. Not the conversation's history either.
    INJECTED = "injected"


# The places that are the session's own history: a fact seen only elsewhere (a system
# message, text the runtime put into a user message) says nothing about persistence.
HISTORY_PLACES = (FactPlace.USER, FactPlace.TOOL, FactPlace.SUMMARY, FactPlace.ASSISTANT)


class NoTurn(StrEnum):
    """What a judgement's line stands for when it is no turn's."""

    STEP = "step"  # a step that took no turn still gets its line
    SCENARIO = "scenario"  # a scenario that was skipped or crashed


class Action(StrEnum):
    """What a step may ask its worker to do (a scenario's ``actions``)."""

    MINT = "mint"  # guarded: the app mints a new id for this principal (96 random bits and an owner tag)
    MINT_FOR_KEY = "mint-for-key"  # guarded: the id of the case named by the id passed along (an HMAC, owner-bound)
    CREATE = "create"  # create a session with the id the coordinator passes along
    CREATE_WITHOUT_ID = "create-without-id"  # create a session and let the runtime choose its id
    RESUME = "resume"  # resume the session with the id passed along
    RESUME_MOST_RECENT = "resume-most-recent"  # list the stored sessions and resume the most recently modified
    TELL = "tell"  # turn: ask the model to remember the fact
    LOOK_UP = "look-up"  # turn (a tell): ask the model to fetch the fact with the app's lookup tool
    ASK = "ask"  # turn: ask the model which value was the favourite
    CLOSE = "close"  # close (disconnect) the open session, which writes session.shutdown
    COMPACT = "compact"  # compact the open session's history now (session.history.compact, as /compact does)
    METADATA = "metadata"  # get_session_metadata for the id passed along
    LIST = "list"  # list_sessions
    DISCOVER = "discover"  # take the most recently active session id from the store's registry
    # A second runtime resumes the open session and asks; then the first takes a turn.
    CONCURRENT_RESUME_AND_ASK = "concurrent-resume-and-ask"
    HOLD = "hold"  # stop here and report 'holding' until the coordinator's faults are in (a fault at = "hold")
    # Start a new runtime in this process (the old one died, or is left behind); reopen nothing.
    RESTART_RUNTIME = "restart-runtime"
    # Turns that make a long history: the step's ``filler_turns`` remember prompts about
    # another topic, each answered; none is judged (the fact stays in the turn before them).
    FILL = "fill"


ACTIONS = tuple(Action)  # (a plain string is looked up in a tuple of members by equality)
TURN_ACTIONS = frozenset({Action.TELL, Action.LOOK_UP, Action.ASK, Action.CONCURRENT_RESUME_AND_ASK})
OPENING_ACTIONS = frozenset({Action.CREATE, Action.CREATE_WITHOUT_ID, Action.RESUME, Action.RESUME_MOST_RECENT})
RESUMING_ACTIONS = (Action.RESUME, Action.RESUME_MOST_RECENT)
# What a person does in `handoff chat`'s page (a step with a ``device``): a new chat, a
# session opened again (reloaded, picked from the list, or from a link), a message, and
# leaving it (the server closes the session after every turn).
BROWSER_ACTIONS = frozenset({Action.CREATE, Action.RESUME, Action.TELL, Action.ASK, Action.CLOSE})


class BrowserKeeps(StrEnum):
    """What the chat's page keeps in the browser's localStorage (a step's ``keeps``)."""

    SESSION_ID = "session-id"  # the lab's last step: the id alone; the server resumes the session by it
    # The lab's demo app as it was: the whole conversation, while the server knows its
    # session only in its memory (handoff/chat/demo.py): the control
    CONVERSATION = "conversation"


# How many turns an action takes (the concurrent one takes a turn on each runtime). The
# worker numbers its turns 1, 2, ... within its step; the checker alone turns those into
# numbers across the scenario, from this table.
TURNS_PER_ACTION = {Action.TELL: 1, Action.LOOK_UP: 1, Action.ASK: 1, Action.CONCURRENT_RESUME_AND_ASK: 2}


def turns_in(actions: tuple[str, ...] | list[str]) -> int:
    return sum(TURNS_PER_ACTION.get(action, 0) for action in actions)


class AppTool(StrEnum):
    """A tool the app registers with the SDK on create and resume (a step's ``tools``); the
    value is the name the model sees and calls."""

    LOOKUP_FAVOURITE = "lookup_favourite"  # returns the fact for its topic: the fact arrives as a tool's result


class AppSetting(StrEnum):
    """What an app passes on create and resume besides the provider and its tools (a step's
    ``settings`` table): does the session keep its own, or must a resume pass it again?"""

    MODEL = "model"
    SYSTEM_MESSAGE = "system-message"  # an app's note appended to the runtime's system prompt
    WORKING_DIRECTORY = "working-directory"
    PERMISSION_HANDLER = "permission-handler"  # with it set, the app's tools ask for permission
    MEMORY = "memory"  # the SDK's memory: first puts memories in the system prompt, second in user messages


class SettingValue(StrEnum):
    """What a step passes for an AppSetting."""

    FIRST = "first"  # the app's first value (what the creating step passes)
    SECOND = "second"  # another value: does the resume's value or the session's win?
    OMITTED = "omitted"  # nothing: does the session keep the value it was created with?


class WorkerStage(StrEnum):
    """What a worker does around a step's actions; a failed one is reported as an action."""

    READ_SPEC = "read-spec"  # read the spec from stdin
    START = "start"  # start the runtime, and check it is the version the step asks for
    STOP = "stop"  # stop the runtime


class SdkLanguage(StrEnum):
    """Which SDK a worker is written on (a ``ready`` event's ``sdk_language``; a step's
    ``sdk = "node@1.0.14"`` names the other one)."""

    PYTHON = "python"  # python -m handoff.worker, on github-copilot-sdk
    NODE = "node"  # node sdks/node/worker.mjs, on @github/copilot-sdk


class HomeKind(StrEnum):
    """Where a step's runtime keeps its sessions (a step's ``home``)."""

    SHARED = "shared"  # one home for the whole scenario
    OWN = "own"  # a new, empty one
    COPIED = "copied"  # a new one, into which the session's state is copied from the previous step's
    ANONYMOUS = "anonymous"  # a container's anonymous volume, which lives and dies with the step's container
    RESTARTED = "restarted"  # (in a run's record only) the restarted container's home, as before


HOMES = (HomeKind.SHARED, HomeKind.OWN, HomeKind.COPIED, HomeKind.ANONYMOUS)  # what a scenario may name


class StoreKind(StrEnum):
    """Where session files go (a scenario's ``store``)."""

    HOME = "home"  # the runtime's home directory
    SQLITE = "sqlite"  # a SQLite file, through the SDK's SessionFs provider: one machine
    POSTGRES = "postgres"  # a PostgreSQL server every host can reach, the same way


class HostKind(StrEnum):
    """Where a step's worker runs (a scenario's ``[hosts]``)."""

    LOCAL = "local"  # this machine; also the name of its host, which a scenario does not declare
    NAMESPACE = "namespace"  # a simulated machine: network and mount namespaces of its own
    SSH = "ssh"  # a simulated machine reached only through OpenSSH
    CONTAINER = "container"  # a container on a real engine
    POD = "pod"  # a Kubernetes pod, played from the step's exported objects by podman


HOST_KINDS = (HostKind.NAMESPACE, HostKind.SSH, HostKind.CONTAINER, HostKind.POD)  # what a scenario's [hosts] may name
ENGINE_HOST_KINDS = (HostKind.CONTAINER, HostKind.POD)  # hosts a container engine runs


class CallKind(StrEnum):
    """What a runtime asks the Copilot service besides a chat (witness/copilot_api.py),
    as a step's ``calls`` names the kinds it expects."""

    MODELS = "models"  # the model list
    MCP = "mcp"  # the built-in GitHub MCP server
    GITHUB = "github"  # the GitHub API: the token's user, its settings, telemetry


class StepSession(StrEnum):
    """Which session id a step gets (a step's ``session``)."""

    PASSED = "passed"  # the one the previous steps used
    UNKNOWN = "unknown"  # a fresh id that was never created
    SCENARIO = "scenario"  # the scenario's own ``session_id`` as written (what another principal guesses)


class StepProvider(StrEnum):
    """Whether a step's runtime is given the model's settings (a step's ``provider``)."""

    PASSED = "passed"
    OMITTED = "omitted"  # no provider and no token, as if the app forgot them: a session does not store them


class FaultKind(StrEnum):
    """What a fault does (a fault's ``kind``; handoff/faults/kinds.py has each one's rules)."""

    KILL = "kill"
    KILL_RUNTIME = "kill-runtime"
    STORE_OUTAGE = "store-outage"
    STORE_RESTART = "store-restart"
    PARTITION = "partition"
    DISK_FULL = "disk-full"
    TEAR_LOG = "tear-log"
    CORRUPT_LOG = "corrupt-log"
    CUT_COPY = "cut-copy"
    TAMPER = "tamper"


class FaultPoint(StrEnum):
    """Where in a step a fault strikes (a fault's ``at``)."""

    BEFORE_STEP = "before-step"  # before the step's worker starts
    MID_TURN = "mid-turn"  # turn N's request has reached the model, which has not answered yet
    AFTER_TURN = "after-turn"  # turn N has answered
    INSIDE_WRITE = "inside-write"  # inside the first append of turn N to a database store, before it commits
    INSIDE_TOOL = "inside-tool"  # turn N's model called the app's tool, whose handler has not returned
    # turn N's tool call asks the app's permission handler, which has not answered
    INSIDE_PERMISSION = "inside-permission"
    HOLD = "hold"  # where the step's actions say "hold" (e.g. after a resume, before any turn)


# Where a worker stops and says ``holding`` so the coordinator can inject a fault; it goes
# on when the coordinator writes a release line to its stdin (or is killed meanwhile).
HOLD_POINTS = (FaultPoint.AFTER_TURN, FaultPoint.INSIDE_WRITE, FaultPoint.INSIDE_TOOL, FaultPoint.INSIDE_PERMISSION,
               FaultPoint.HOLD)
TURN_POINTS = (FaultPoint.MID_TURN, FaultPoint.AFTER_TURN, FaultPoint.INSIDE_WRITE, FaultPoint.INSIDE_TOOL,
               FaultPoint.INSIDE_PERMISSION)  # of a turn N


class Command(StrEnum):
    """The commands that store runs (a run record's ``command``)."""

    RUN = "run"  # the matrix of scenarios
    LAB = "lab"  # Lab 05's transcript
    SKEW = "skew"  # a version grid
