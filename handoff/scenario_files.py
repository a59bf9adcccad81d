"""Scenario files: found, read and checked, with errors that name the file, the step and
the field, and what each must be (handoff/scenario.py says what a scenario holds)."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from handoff.errors import UserError
from handoff.faults.kinds import AFTER_STEP, KINDS, Needs
from handoff.inputs import one_line
from handoff.protocol import BYOK_PATH, COPILOT_API_PATH
from handoff.scenario import AFTER, LEASE_EXPIRED, NAME, NAME_RULE, TAGS, FaultPlan, PathExpectation, Scenario, Step
from handoff.session_ids import RULE as SAFE_ID_RULE, safe_id
from handoff.scenario_fields import Fields, read_text
from handoff.versions import DEFAULT_RUNTIME, DEFAULT_SDK, NODE_WORKER_ACTIONS, is_node, older, well_formed
from handoff.words import (
    ACTIONS,
    BROWSER_ACTIONS,
    BrowserKeeps,
    CallKind,
    EXPECTABLE,
    HOLD_POINTS,
    HOMES,
    HOST_KINDS,
    OPENING_ACTIONS,
    TELL_EXPECTABLE,
    TURN_ACTIONS,
    TURN_POINTS,
    Action,
    AppSetting,
    AppTool,
    FaultKind,
    FaultPoint,
    HomeKind,
    HostKind,
    SettingValue,
    StepProvider,
    StepSession,
    StoreKind,
    Summary,
    turns_in,
)

MAX_HEAL_SECONDS = 600.0  # a fault healed after a delay: seconds, not hours
MAX_FILLER_TURNS = 2000  # a history longer than this takes minutes to build: measure it with make bench
MIN_COUNTED_FILLER_TURNS = 40  # the store's cost is compared over the first and last third of them
MAX_TURN_TIMEOUT_SECONDS = 600.0  # an answer that takes longer is not coming; nor is infinity a time-out
PRINCIPAL = re.compile(r"[A-Za-z0-9_-]{1,40}")
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,19}")  # it becomes part of a namespace's and a hostname's name
# A step's tables of what it expects on one path to a model (scenario.py, PathExpectation).
PATH_TABLES = {"copilot-api": COPILOT_API_PATH, "byok": BYOK_PATH}
PROJECT_ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = PROJECT_ROOT / "scenarios"


def _container_rules(read: Fields, step: Step, on_container: bool, before: Step | None) -> None:
    """What only a container host can do, and what it cannot."""
    if step.home == HomeKind.ANONYMOUS and not on_container:
        raise read.fail("home", "is 'anonymous' on a host that is not a container: only a container has an "
                                "anonymous volume")
    if step.restart and not on_container:
        raise read.fail("restart", "is set on a host that is not a container: only a container is restarted")
    if not on_container:
        return
    if step.home == HomeKind.COPIED:
        raise read.fail("home", "is 'copied' on a container host, whose home is a volume of the engine, not a "
                                "directory here; use 'shared' (a named volume in both) or 'own'")
    refused = next((plan.kind for plan in step.faults if not KINDS[plan.kind].on_container), None)
    if refused:
        raise read.fail("faults", f"has a {refused} on a container host: the tool does not reach inside the "
                                  f"engine's volumes, network or process tree; run that step on 'local' or a "
                                  f"namespace host")
    if step.restart and before is None:
        raise read.fail("restart", f"is set, but no earlier step ran a container on host '{step.host}'")
    if step.restart and step.sdk != before.sdk:
        raise read.fail("sdk" if step.sdk else "restart",
                        f"differs from step '{before.name}''s, whose container this step restarts: a restarted "
                        f"container runs the worker it ran before (sdk = {before.sdk or 'the default'})")
    if step.restart and "home" in read.table:
        raise read.fail("home", "is set on a restart: a restarted container keeps the home it had")


def _step(path: Path, index: int, table: Any, hosts: dict[str, str], scenario_id: str | None,
          earlier: list[Step]) -> Step:
    if not isinstance(table, dict):
        raise UserError(f"{path}: steps[{index}] must be a table ([[steps]])")
    name = table.get("name", f"#{index + 1}")
    read = Fields(path, table, f"step '{name}'")
    if "wait" in table:
        raise read.fail("wait", "is gone: a step no longer waits a number of seconds, which raced the runtime's start; "
                                f"to let the session's lease run out first, write after = \"{LEASE_EXPIRED}\"")
    read.reject_unknown({"name", "actions", "home", "session", "host", "principal", "guarded", "reuse",
                         "after", "faults", "forked", "expect", "closed_before_resume", "provider", "expect_tell",
                         "restart", "runtime", "sdk", "loaded_all_events", "tools", "settings", "summary",
                         "filler_turns", "flat_store_cost", "calls", "device", "keeps", *PATH_TABLES})
    actions = _actions(read)
    step = Step(
        name=_name(read),
        actions=actions,
        home=read.get("home", str, HomeKind.SHARED, HOMES),
        session=read.get("session", str, StepSession.PASSED, tuple(StepSession)),
        host=read.get("host", str, HostKind.LOCAL, (HostKind.LOCAL, *hosts)),
        principal=read.text("principal", "alice", PRINCIPAL),
        guarded=read.get("guarded", bool, False),
        reuse=read.get("reuse", bool, False),
        after=read.get("after", str, None, AFTER),
        faults=tuple(_fault(path, name, i, plan) for i, plan in enumerate(read.get("faults", list, []))),
        expect_tell=read.get("expect_tell", str, None, TELL_EXPECTABLE),
        forked=read.get("forked", bool, None),
        expect=_expect(read),
        closed_before_resume=read.get("closed_before_resume", bool, None),
        provider=read.get("provider", str, StepProvider.PASSED, tuple(StepProvider)),
        restart=read.get("restart", bool, False),
        runtime=read.version("runtime"),
        sdk=read.sdk(),
        loaded_all_events=read.get("loaded_all_events", bool, None),
        tools=_tools(read),
        settings=_settings(read),
        summary=read.get("summary", str, None, tuple(Summary)),
        filler_turns=_filler_turns(read, actions),
        flat_store_cost=_flat_store_cost(read, actions),
        on_paths=_on_paths(path, table, name),
        calls=_calls(read),
        device=_device(read),
        keeps=read.get("keeps", str, BrowserKeeps.SESSION_ID, tuple(BrowserKeeps)),
    )
    _check_faults(read, step, hosts)
    _container_rules(read, step, hosts.get(step.host) == HostKind.CONTAINER,
                     next((s for s in reversed(earlier) if s.host == step.host), None))
    _step_rules(read, step, scenario_id, hosts)
    for on in step.on_paths:
        _expectation_rules(Fields(path, table[_table_of(on.path)], f"step '{name}' [{_table_of(on.path)}]"),
                           step.on_path(on.path))
    if not earlier:
        _first_step_rules(read, step, scenario_id)
    return step


def _first_step_rules(read: Fields, step: Step, scenario_id: str | None) -> None:
    """What the first step cannot do: take what no step before it made."""
    if step.home == HomeKind.COPIED:
        raise read.fail("home", "is 'copied' on the first step: it copies the previous step's home, and there is none")
    opening = next((a for a in step.actions if a in OPENING_ACTIONS or a == Action.MINT), None)
    if opening == Action.RESUME and step.session == StepSession.PASSED and scenario_id is None:
        raise read.fail("session", "is 'passed' (the default), but the first step has no earlier step to pass it an "
                                   "id to resume: create one first, set session = \"unknown\" to resume an id nobody "
                                   "made, or give the scenario a session_id")


def _actions(read: Fields) -> tuple[str, ...]:
    actions = read.get("actions", list)
    if not actions:
        raise read.fail("actions", "is empty: list what the worker does, e.g. [\"create\", \"tell\", \"close\"]")
    for action in actions:
        if not isinstance(action, str) or action not in ACTIONS:
            raise read.fail("actions", f"has unknown action {action!r} (known: {', '.join(ACTIONS)})")
    first_turn = next((i for i, a in enumerate(actions) if a in TURN_ACTIONS or a == Action.FILL), None)
    if first_turn is not None and not any(a in OPENING_ACTIONS for a in actions[:first_turn]):
        raise read.fail("actions", f"has the turn {actions[first_turn]!r} before any create or resume")
    return tuple(actions)


def _filler_turns(read: Fields, actions: tuple[str, ...]) -> int:
    """How many turns a "fill" takes: given exactly when the step fills (a count without a
    fill, or a fill without a count, is a mistake, not a default)."""
    turns = read.get("filler_turns", int, 0)
    if Action.FILL in actions and not 1 <= turns <= MAX_FILLER_TURNS:
        raise read.fail("filler_turns", f"must be from 1 to {MAX_FILLER_TURNS} with a \"fill\" action (the turns it "
                                        f"takes), got {turns}")
    if Action.FILL not in actions and "filler_turns" in read.table:
        raise read.fail("filler_turns", "is set, but the step's actions have no \"fill\"")
    return turns


def _flat_store_cost(read: Fields, actions: tuple[str, ...]) -> bool | None:
    """Whether a fill's cost per turn to the store is expected to stay flat: only a fill
    has the turns to tell (a store's cost is counted over its filler turns)."""
    flat = read.get("flat_store_cost", bool, None)
    if flat is not None and Action.FILL not in actions:
        raise read.fail("flat_store_cost", "is set, but the step's actions have no \"fill\": the store's cost per "
                                           "turn is counted over a fill's turns")
    if flat is not None and read.get("filler_turns", int, 0) < MIN_COUNTED_FILLER_TURNS:
        raise read.fail("flat_store_cost", f"needs filler_turns of at least {MIN_COUNTED_FILLER_TURNS}: fewer turns "
                                           f"cannot tell a flat cost from a growing one")
    return flat


def _tools(read: Fields) -> tuple[str, ...]:
    tools = read.get("tools", list, [])
    for tool in tools:
        if not isinstance(tool, str) or tool not in tuple(AppTool):
            raise read.fail("tools", f"has unknown tool {tool!r} (known: {', '.join(AppTool)})")
    if len(set(tools)) != len(tools):
        raise read.fail("tools", "names a tool twice: the SDK refuses two tools of one name")
    return tuple(tools)


def _settings(read: Fields) -> tuple[tuple[str, str], ...]:
    settings = read.get("settings", dict, {})
    for name, value in settings.items():
        if name not in tuple(AppSetting):
            raise read.fail("settings", f"has unknown setting {name!r} (known: {', '.join(AppSetting)})")
        if value not in tuple(SettingValue):
            raise read.fail("settings", f"{name} = {value!r}: choose one of {', '.join(SettingValue)}")
        if name == AppSetting.PERMISSION_HANDLER and value == SettingValue.SECOND:
            raise read.fail("settings", f"{name} = {value!r}: the app has one handler (it approves); "
                                        f"say {SettingValue.FIRST!r} or {SettingValue.OMITTED!r}")
    return tuple(sorted(settings.items()))


def _step_rules(read: Fields, step: Step, scenario_id: str | None, hosts: dict[str, str]) -> None:
    """What a step's fields need of each other."""
    for field_name in ("runtime", "sdk"):
        elsewhere = step.host != HostKind.LOCAL and not (field_name == "sdk" and is_node(step.sdk))
        if getattr(step, field_name) and elsewhere:
            raise read.fail(field_name, f"is set on host '{step.host}': other runtime and SDK versions run on host "
                                        f"'local' only (the Node.js SDK on any host)")
    if is_node(step.sdk):
        _node_rules(read, step)
    if step.device:
        _device_rules(read, step, hosts)
    elif "keeps" in read.table:
        raise read.fail("keeps", "is set on a step with no device: it says what a browser keeps of the chat's page; "
                                 "name the browser with device = \"NAME\"")
    if step.after == LEASE_EXPIRED and not step.guarded:
        raise read.fail("after", "is 'lease-expired' on a step that is not guarded: leases are the guard's; "
                                 "set guarded = true")
    if step.session == StepSession.SCENARIO and scenario_id is None:
        raise read.fail("session", "is 'scenario' but the scenario has no session_id to use")
    if step.asks and step.expect is None:
        raise read.fail("expect", "is missing: a step that asks must say which verdict it expects")
    _expectation_rules(read, step)


def _expectation_rules(read: Fields, step: Step) -> None:
    """What a step's expectations need of its actions (on each path, of that path's)."""
    if step.expect_tell is not None and not step.tells:
        raise read.fail("expect_tell", "is set but the step has no 'tell' turn to judge")
    if step.expect is not None and not step.asks:
        raise read.fail("expect", "is set but the step has no 'ask' turn to judge")
    if step.calls is not None and not step.asks:
        raise read.fail("calls", "is set but the step has no 'ask' turn to judge it with")
    if isinstance(step.expect, tuple) and len(step.expect) != step.ask_count:
        raise read.fail("expect", f"lists {len(step.expect)} verdict(s), but the step asks {step.ask_count} time(s): "
                                  f"give one for each ask, or one string for all")


def _device(read: Fields) -> str | None:
    device = read.get("device", str, None)
    if device is not None and not PRINCIPAL.fullmatch(device):
        raise read.fail("device", f"{device!r} is not a device's name: 1-40 letters, digits, '_' or '-'")
    return device


def _device_rules(read: Fields, step: Step, hosts: dict[str, str]) -> None:
    """A step in a browser does what a person can do in the chat's page, through its
    guard, on this machine; refused before a run rather than failing in one."""
    cannot = [action for action in step.actions if action not in BROWSER_ACTIONS]
    if cannot:
        raise read.fail("actions", f"has {cannot[0]!r}, which a person in the chat's page cannot do (device = "
                                   f"{step.device!r}; they can: {', '.join(sorted(BROWSER_ACTIONS))})")
    if not step.guarded:
        raise read.fail("guarded", f"is not set with device = {step.device!r}: the chat resumes every session through "
                                   f"its guard; set guarded = true")
    if hosts.get(step.host, HostKind.LOCAL) not in (HostKind.LOCAL, HostKind.NAMESPACE):
        raise read.fail("host", f"is '{step.host}' ({hosts[step.host]}) with device = {step.device!r}: a browser "
                                f"runs on host 'local' or a simulated host (namespace) only")
    for field_name in ("sdk", "runtime", "tools", "settings"):
        if getattr(step, field_name):
            raise read.fail(field_name, f"is set with device = {step.device!r}: the chat server runs the run's "
                                        f"runtime and SDK with none of the app's tools or settings")
    other = next((plan for plan in step.faults if (plan.kind, plan.at) != (FaultKind.KILL, FaultPoint.AFTER_TURN)), None)
    if other:
        raise read.fail("faults", f"has {other.kind!r} at {other.at!r} with device = {step.device!r}: the chat server "
                                  f"is killed between turns (kind = \"{FaultKind.KILL}\", at = \"{FaultPoint.AFTER_TURN}\") or not at all")


def _node_rules(read: Fields, step: Step) -> None:
    """What the Node.js worker cannot do (the Python worker's guard, app tools and settings, holds and
    second runtime), refused before a run rather than reported by the worker during one."""
    cannot = [action for action in step.actions if action not in NODE_WORKER_ACTIONS]
    if cannot:
        raise read.fail("actions", f"has {cannot[0]!r}, which the Node.js worker (sdk = {step.sdk!r}) cannot do "
                                   f"(it does: {', '.join(sorted(NODE_WORKER_ACTIONS))})")
    if step.guarded:
        raise read.fail("guarded", f"is set with sdk = {step.sdk!r}: the guard is the Python worker's")
    if step.tools:
        raise read.fail("tools", f"is set with sdk = {step.sdk!r}: the app's tools are the Python worker's")
    if step.settings:
        raise read.fail("settings", f"is set with sdk = {step.sdk!r}: the app's settings are the Python worker's")
    held = next((plan for plan in step.faults if plan.at in HOLD_POINTS), None)
    if held:
        raise read.fail("faults", f"has a fault at {held.at!r} with sdk = {step.sdk!r}: holds are the Python "
                                  f"worker's")


def _fault(path: Path, step: str, index: int, table: Any) -> FaultPlan:
    if not isinstance(table, dict):
        raise UserError(f"{path}: step '{step}': faults[{index}] must be a table ([[steps.faults]])")
    read = Fields(path, table, f"step '{step}': faults[{index}]")
    kind = read.get("kind", str, choices=tuple(KINDS))
    rules = KINDS[kind]
    read.reject_unknown({"kind", "at", "turn", "heal", *rules.options} | ({"target"} if rules.targets else set()))
    heal = read.get("heal", (str, int, float), AFTER_STEP)
    if isinstance(heal, str):
        if heal != AFTER_STEP:
            raise read.fail("heal", f"must be {AFTER_STEP!r} or a number of seconds after the injection, got {heal!r}")
        heal = None
    else:
        heal = read.number("heal", 0.0, MAX_HEAL_SECONDS)
        if not rules.heals:
            raise read.fail("heal", f"is set, but a {kind} does not heal")
    options = {}
    for option, (kind_of, least, most) in rules.options.items():
        value = read.get(option, (kind_of, int) if kind_of is float else kind_of, None)
        if value is not None and not least <= value <= most:
            raise read.fail(option, f"must be from {least:g} to {most:g}, got {value!r}")
        options[option] = value
    turn = read.get("turn", int, 1)
    if not 1 <= turn <= 100:
        raise read.fail("turn", f"must be a turn of the step, from 1, got {turn}")
    return FaultPlan(kind=kind, at=read.get("at", str, rules.points[0], rules.points), turn=turn, heal=heal,
                     target=read.get("target", str, rules.targets[0], rules.targets) if rules.targets else None,
                     **options)


def _on_paths(path: Path, table: dict[str, Any], name: str) -> tuple[PathExpectation, ...]:
    found = []
    for key, model_path in PATH_TABLES.items():
        if key not in table:
            continue
        read = Fields(path, table[key], f"step '{name}' [{key}]") if isinstance(table[key], dict) else None
        if read is None:
            raise Fields(path, table, f"step '{name}'").fail(key, "must be a table of expect, expect_tell and calls "
                                                                   f"([steps.{key}])")
        read.reject_unknown({"expect", "expect_tell", "calls"})
        if not read.table:
            raise read.fail("expect", f"is missing: [steps.{key}] says what the step expects on that path")
        found.append(PathExpectation(model_path, _expect(read),
                                     read.get("expect_tell", str, None, TELL_EXPECTABLE), _calls(read)))
    return tuple(found)


def _calls(read: Fields) -> tuple[str, ...] | None:
    """The kinds of call a step expects its runtime to make to the service (CallKind), in
    any order, each once; [] for none."""
    given = read.get("calls", list, None)
    if given is None:
        return None
    kinds = tuple(CallKind)
    if not all(isinstance(kind, str) and kind in kinds for kind in given) or len(set(given)) < len(given):
        raise read.fail("calls", f"must be a list of kinds of call, each once, from {', '.join(kinds)}; got {given!r}")
    return tuple(sorted(given))


def _table_of(model_path: str) -> str:
    return next(key for key, found in PATH_TABLES.items() if found == model_path)


def _expect(read: Fields) -> str | tuple[str, ...] | None:
    value = read.get("expect", (str, list), None)
    if value is None or isinstance(value, str):
        return read.get("expect", str, None, EXPECTABLE)
    if not value or any(item not in EXPECTABLE for item in value):
        raise read.fail("expect", f"must list verdicts among {', '.join(EXPECTABLE)}, got {value!r}")
    return tuple(value)


def _name(read: Fields) -> str:
    name = read.get("name", str)
    if not NAME.fullmatch(name):
        raise read.fail("name", f"must be {NAME_RULE} (it names the step's files and directories), got {name!r}")
    return name


def _check_faults(read: Fields, step: Step, hosts: dict[str, str]) -> None:
    """What a step's faults need of the step itself."""
    turns = turns_in(step.actions)
    for plan in step.faults:
        rules = KINDS[plan.kind]
        if plan.at == FaultPoint.INSIDE_PERMISSION and (not step.tools or dict(step.settings).get(
                AppSetting.PERMISSION_HANDLER) != SettingValue.FIRST):
            raise read.fail("faults", f"has a {plan.kind} at \"inside-permission\", but the step's tools ask no "
                                      f"permission: give it tools = [\"lookup_favourite\"], a look-up turn and "
                                      f"settings = {{ \"permission-handler\" = \"first\" }}")
        if plan.at == FaultPoint.INSIDE_TOOL and not step.tools:
            raise read.fail("faults", f"has a {plan.kind} at \"inside-tool\", but the step registers no tool: "
                                      f"give it tools = [\"lookup_favourite\"] and a look-up turn")
        if plan.at in TURN_POINTS and plan.turn > turns:
            raise read.fail("faults", f"has a {plan.kind} at turn {plan.turn}, but the step takes {turns} turn(s)")
        if plan.at == FaultPoint.HOLD and Action.HOLD not in step.actions:
            raise read.fail("faults", f"has a {plan.kind} at \"hold\", but the step's actions have no \"hold\"")
        if plan.kind == FaultKind.KILL and plan.target == "app" and step.host != HostKind.LOCAL:
            raise read.fail("faults", "kills the app alone on a simulated host: there the worker is the host's process "
                                      "1, and when it dies the kernel kills its runtime too; run that step on 'local'")
        if rules.needs == Needs.SIMULATED_HOST and step.host == HostKind.LOCAL:
            raise read.fail("faults", f"has a {plan.kind} on a step that runs on 'local': give the step a host from "
                                      f"[hosts] (a partition cuts a simulated host's own network)")
        if rules.needs == Needs.COPIED_HOME and step.home != HomeKind.COPIED:
            raise read.fail("faults", f"has a {plan.kind}, which needs the step's home = \"copied\"")


def load(path: Path) -> Scenario:
    if not NAME.fullmatch(path.stem):
        raise UserError(f"{path}: the file's name (without .toml) is the scenario's name, which names the run's "
                        f"directories: it must be {NAME_RULE}; rename the file")
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as error:
        raise UserError(f"{path}: not valid TOML: {error}") from None
    except RecursionError:  # the parser's own depth, long before any field of a scenario would be
        raise UserError(f"{path}: arrays or tables nested too deeply; no field of a scenario nests") from None
    read = Fields(path, data)
    read.reject_unknown({"title", "order", "proves", "does_not_prove", "proves_in_short", "does_not_prove_in_short",
                         "session_id", "hosts", "store", "steps", "turn_timeout", "known_good", "tags"})
    hosts = read.get("hosts", dict, {})
    for name, kind in hosts.items():
        if name == HostKind.LOCAL or kind not in HOST_KINDS or not HOST_NAME.fullmatch(name):
            raise UserError(f"{path}: hosts: '{name}' must be a name other than 'local' (letters, digits, '-', at most "
                            f"20) with a kind among {', '.join(HOST_KINDS)}, got {kind!r}")
    session_id = read.get("session_id", str, None)
    if session_id is not None and not safe_id(session_id):
        raise read.fail("session_id", f"must be {SAFE_ID_RULE} (it names a directory), got {session_id!r}")
    order = read.get("order", int, 1000)
    if not -10**6 <= order <= 10**6:
        raise read.fail("order", f"must be a whole number from -1000000 to 1000000, got {order}")
    steps: list[Step] = []
    for index, table in enumerate(read.get("steps", list)):
        steps.append(_step(path, index, table, hosts, session_id, steps))
    if not steps:
        raise read.fail("steps", "is empty: a scenario needs at least one [[steps]] table")
    names = [s.name for s in steps]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise UserError(f"{path}: step '{duplicate}': field 'name' is used by more than one step")
    store = read.get("store", str, StoreKind.HOME, tuple(StoreKind))
    for step in steps:
        if any(KINDS[plan.kind].needs == Needs.POSTGRES for plan in step.faults) and store != StoreKind.POSTGRES:
            raise UserError(f"{path}: step '{step.name}': field 'faults' has a fault of the database server, "
                            f"but the scenario's store is '{store}': set store = \"postgres\"")
        if step.flat_store_cost is not None and store == StoreKind.HOME:
            raise UserError(f"{path}: step '{step.name}': field 'flat_store_cost' needs a database store, but the "
                            f"scenario's store is '{store}' (the runtime writes a home itself, uncounted): set "
                            f"store = \"sqlite\" or \"postgres\"")
    tags = read.get("tags", list, [])
    if any(tag not in TAGS for tag in tags):
        raise read.fail("tags", f"may hold {', '.join(TAGS)}, got {tags!r}")
    for field in ("title", "proves", "does_not_prove"):
        if not read.get(field, str).strip():
            raise read.fail(field, "is empty: every scenario says what it is and what it does and does not prove")
    if not one_line(read.get("title", str)):
        raise read.fail("title", "must be one line (it heads the scenario's rows and sections)")
    scenario = Scenario(
        name=path.stem,
        title=read.get("title", str),
        proves=read.get("proves", str),
        does_not_prove=read.get("does_not_prove", str),
        steps=tuple(steps),
        order=order,
        session_id=session_id,
        hosts=hosts,
        store=store,
        path=str(path),
        turn_timeout=_turn_timeout(read),
        known_good=_known_good(read),
        proves_in_short=_one_line(read, "proves_in_short"),
        does_not_prove_in_short=_one_line(read, "does_not_prove_in_short"),
        tags=tuple(tags),
    )
    _pod_rules(path, scenario)
    return scenario


def _pod_rules(path: Path, scenario: Scenario) -> None:
    """A scenario on pods is played from its cluster objects: every step is a pod's, and
    nothing the manifests cannot hold."""
    if HostKind.POD not in scenario.hosts.values():
        return
    elsewhere = next((step for step in scenario.steps if scenario.hosts.get(step.host) != HostKind.POD), None)
    if elsewhere is not None:
        raise UserError(f"{path}: step '{elsewhere.name}' runs on '{elsewhere.host}', but the scenario has pod hosts: "
                        f"a scenario on pods is played from its Kubernetes objects, every step a pod's")
    problem = cluster_refusal(scenario)
    if problem:
        raise UserError(f"{path}: a scenario on pods is played from its Kubernetes objects, which cannot hold it: "
                        f"{problem}")


def _turn_timeout(read: Fields) -> float:
    seconds = float(read.get("turn_timeout", (int, float), 60.0))
    if not 0 < seconds <= MAX_TURN_TIMEOUT_SECONDS:  # also false for NaN
        raise read.fail("turn_timeout", f"must be more than 0 seconds and at most {MAX_TURN_TIMEOUT_SECONDS:g}, "
                                        f"got {seconds:g}")
    return seconds


def _known_good(read: Fields) -> tuple[tuple[str, str], ...]:
    """``["1.0.102 -> 1.0.92"]``: a session last written by 1.0.102 may be resumed by 1.0.92."""
    pairs = []
    for entry in read.get("known_good", list, []):
        writer, arrow, resumer = (entry if isinstance(entry, str) else "").partition("->")
        writer, resumer = writer.strip(), resumer.strip()
        if not arrow or not well_formed(writer) or not well_formed(resumer):
            raise read.fail("known_good", f'must list pairs such as "1.0.102 -> 1.0.92" (last writer -> resumer), '
                                          f"got {entry!r}")
        if not older(resumer, writer):
            raise read.fail("known_good", f"has {entry!r}, which is not a downgrade: the guard refuses only resumes "
                                          f"by a runtime older than the last writer")
        pairs.append((writer, resumer))
    return tuple(pairs)


def _one_line(read: Fields, field: str) -> str:
    value = read.get(field, str, "")
    if "\n" in value or len(value) > 80:
        raise read.fail(field, f"must be one line of at most 80 characters (a few words), got {len(value)}")
    return value


def available(directory: Path = SCENARIO_DIR) -> dict[str, Path]:
    return {path.stem: path for path in sorted(directory.glob("*.toml"))}


def select(names: list[str], directory: Path = SCENARIO_DIR, tags: tuple[str, ...] = ()) -> list[Scenario]:
    """Load the named scenarios, or without names the ladder: every scenario whose tags
    are among ``tags`` (untagged ones always), in ladder order. A name may also be a
    file path."""
    known = available(directory)
    paths = []
    for name in names or list(known):
        if name in known:
            paths.append(known[name])
        elif name.endswith(".toml") and Path(name).is_file():
            paths.append(Path(name))
        elif "/" in name or name.endswith(".toml") or os.path.lexists(name):  # meant as a path: say what is wrong with it
            raise UserError(f"{name}: {_not_a_scenario_file(Path(name))}")
        else:
            choices = ", ".join(known) or "(none found)"
            raise UserError(f"unknown scenario {name!r}: choose from {choices}, or give a path to a .toml file")
    stems = [p.stem for p in paths]
    twice = next((stem for stem in stems if stems.count(stem) > 1), None)
    if twice:  # its rows, its directories and diff's matching are all by name
        raise UserError(f"scenario '{twice}' is named twice (by name or by a file of that name); name it once")
    loaded = [load(p) for p in paths]
    if not names:
        loaded = [s for s in loaded if set(s.tags) <= set(tags)]
    return sorted(loaded, key=lambda s: (s.order, s.name))


def _not_a_scenario_file(path: Path) -> str:
    if not os.path.lexists(path):
        return "no such file; give a scenario's name (`handoff list`) or the path of a .toml file"
    if path.is_symlink() and not path.exists():
        return "a link that leads nowhere (or in a loop); give the .toml file it should name"
    if path.is_dir():
        return "is a directory; give a scenario's .toml file"
    if not path.is_file():
        return "is not a regular file (a FIFO, a device or a socket); give a scenario's .toml file"
    return "a scenario file's name ends in .toml; rename it"


def tagged(tag: str, directory: Path = SCENARIO_DIR) -> list[Scenario]:
    """The scenarios that carry ``tag`` (e.g. the fault scenarios), in ladder order."""
    return [s for s in select([], directory, (tag,)) if tag in s.tags]


def cluster_refusal(scenario: Scenario) -> str | None:
    """Why a cluster's manifests cannot hold ``scenario`` (`handoff export k8s`, and a
    scenario whose hosts are pods, which is played from them), or None."""
    if scenario.store == StoreKind.SQLITE:
        return "its store is a SQLite file, which one machine holds; use a postgres scenario"
    for step in scenario.steps:
        where = f"step '{step.name}'"
        if step.restart:
            return f"{where} restarts a container: a Job's finished pod is not started again"
        if step.home == HomeKind.COPIED:
            return f"{where} has home 'copied', which the coordinator copies between steps"
        if step.faults or Action.HOLD in step.actions:
            return f"{where} has a fault, which the coordinator injects at a fault point of the worker"
        if step.device:
            return f"{where} is done in a browser (device {step.device!r}), which no Job of a cluster drives"
        if step.guarded:
            return f"{where} is guarded: the coordinator mints its ids with a key it makes for each run"
        other = [f"{kind} {version}" for kind, version, default in (
            ("runtime", step.runtime, DEFAULT_RUNTIME), ("SDK", step.sdk, DEFAULT_SDK))
            if version not in (None, default)]
        if other:
            return f"{where} names {' and '.join(other)}: the image holds the default runtime and SDK only"
        if Action.CREATE_WITHOUT_ID in step.actions and any(later.session == StepSession.PASSED for later in
                                                       scenario.steps[scenario.steps.index(step) + 1:]):
            return f"{where} lets the runtime choose the id, which the coordinator reads from its events to pass on"
    return None
