"""Scenario files: the schema, and errors that name the file, step and field."""

import dataclasses

import pytest

from handoff import scenario_files
from handoff.errors import UserError
from handoff.scenario import Scenario, Step
from handoff.scenario_files import SCENARIO_DIR, load, select

HEADER = 'title = "T"\nproves = "P"\ndoes_not_prove = "D"\n'
STEP_A = '[[steps]]\nname = "A"\nactions = ["create", "tell", "close"]\n'


def step(name="B", actions='["resume", "ask", "close"]', extra='expect = "kept"'):
    return f'[[steps]]\nname = "{name}"\nactions = {actions}\n{extra}\n'


def write(tmp_path, text, name="demo"):
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def load_error(tmp_path, text) -> str:
    path = write(tmp_path, text)
    with pytest.raises(UserError) as raised:
        load(path)
    message = str(raised.value)
    assert str(path) in message
    return message


def test_a_valid_file_loads_into_frozen_dataclasses(tmp_path):
    text = 'order = 7\nsession_id = "fixed"\n' + HEADER + STEP_A + step(
        extra='expect = "kept"\nhome = "own"\nsession = "unknown"\nclosed_before_resume = true')
    loaded = load(write(tmp_path, text))
    assert loaded == Scenario(
        name="demo", title="T", proves="P", does_not_prove="D", order=7, session_id="fixed",
        path=str(tmp_path / "demo.toml"),
        steps=(
            Step("A", ("create", "tell", "close")),
            Step("B", ("resume", "ask", "close"), home="own", session="unknown", expect="kept",
                 closed_before_resume=True),
        ),
    )
    assert loaded.steps[1].asks and not loaded.steps[0].asks
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.title = "changed"
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.steps[0].home = "own"


def test_defaults(tmp_path):
    loaded = load(write(tmp_path, HEADER + STEP_A))
    assert (loaded.order, loaded.session_id) == (1000, None)
    assert loaded.steps[0] == Step("A", ("create", "tell", "close"), home="shared", session="passed", host="local",
                                   expect=None, closed_before_resume=None)


def test_invalid_toml(tmp_path):
    assert "not valid TOML" in load_error(tmp_path, HEADER + "[[steps]\n")


def test_unreadable_file(tmp_path):
    with pytest.raises(UserError, match="cannot read"):
        load(tmp_path / "absent.toml")


@pytest.mark.parametrize("field", ["title", "proves", "does_not_prove"])
def test_missing_top_level_text(tmp_path, field):
    text = "".join(line + "\n" for line in HEADER.splitlines() if not line.startswith(field)) + STEP_A
    assert f"field '{field}' is missing" in load_error(tmp_path, text)


def test_missing_and_empty_steps(tmp_path):
    assert "field 'steps' is missing" in load_error(tmp_path, HEADER)
    assert "field 'steps' is empty" in load_error(tmp_path, HEADER + "steps = []\n")


def test_unknown_top_level_field(tmp_path):
    assert "field 'colour' is not a known field" in load_error(tmp_path, 'colour = "red"\n' + HEADER + STEP_A)


# Each case: the step's TOML and what the message must say after "step 'B': field ...".
STEP_ERRORS = {
    "unknown step field": (step(extra='expect = "kept"\ncolour = "red"'), "field 'colour' is not a known field"),
    "unknown action": (step(actions='["resume", "teleport"]', extra=""), "field 'actions' has unknown action 'teleport'"),
    "empty actions": (step(actions="[]", extra=""), "field 'actions' is empty"),
    "ask without expect": (step(extra=""), "field 'expect' is missing"),
    "expect without ask": (step(actions='["resume", "tell"]'), "field 'expect' is set but the step has no 'ask'"),
    "bad expect": (step(extra='expect = "maybe"'), "field 'expect' must be one of kept, lost, unknown, failed-loudly, refused, no-provider, undelivered, got 'maybe'"),
    "bad home": (step(extra='expect = "kept"\nhome = "cloud"'), "field 'home' must be one of shared, own, copied, anonymous, got 'cloud'"),
    "bad session": (step(extra='expect = "kept"\nsession = "any"'), "field 'session' must be one of passed, unknown"),
    "actions not a list": (step(actions='"resume"', extra=""), "field 'actions' must be list, got str"),
    "closed not a bool": (step(extra='expect = "kept"\nclosed_before_resume = "yes"'),
                          "field 'closed_before_resume' must be bool, got str"),
    "malformed runtime": (step(extra='expect = "kept"\nruntime = "latest"'),
                          'field \'runtime\' must be a version number such as "1.0.92", got \'latest\''),
    "runtime not a string": (step(extra='expect = "kept"\nruntime = 1.0'), "field 'runtime' must be str, got float"),
    "malformed sdk": (step(extra='expect = "kept"\nsdk = "1.0"'), "field 'sdk' must be a version number"),
    "loaded events not a bool": (step(extra='expect = "kept"\nloaded_all_events = 1'),
                                 "field 'loaded_all_events' must be bool, got int"),
}


@pytest.mark.parametrize("case", STEP_ERRORS, ids=list(STEP_ERRORS))
def test_step_errors_name_file_step_and_field(tmp_path, case):
    text, expected = STEP_ERRORS[case]
    assert f"step 'B': {expected}" in load_error(tmp_path, HEADER + STEP_A + text)


def test_step_without_a_name_is_named_by_position(tmp_path):
    text = HEADER + STEP_A + '[[steps]]\nactions = ["create"]\n'
    assert "step '#2': field 'name' is missing" in load_error(tmp_path, text)


@pytest.mark.parametrize("value, shown", [('"x"', "got str 'x'"), ("true", "got bool True")])
def test_wrong_type_for_order(tmp_path, value, shown):
    assert f"field 'order' must be int, {shown}" in load_error(tmp_path, f"order = {value}\n" + HEADER + STEP_A)


def test_duplicate_step_names(tmp_path):
    message = load_error(tmp_path, HEADER + STEP_A + step(name="A"))
    assert "step 'A': field 'name' is used by more than one step" in message


def test_a_step_that_is_not_a_table(tmp_path):
    assert "steps[0] must be a table" in load_error(tmp_path, HEADER + "steps = [1]\n")


def test_a_nested_list_as_an_action_is_a_user_error(tmp_path):
    assert "step 'B': field 'actions' has unknown action ['create'] (known: mint," in load_error(
        tmp_path, HEADER + step(actions='[["create"]]', extra=""))


def test_a_turn_before_the_opening_action_is_rejected(tmp_path):
    assert "has the turn 'ask' before any create or resume" in load_error(tmp_path, HEADER + step(actions='["ask", "resume"]'))


# The shipped scenarios


def test_select_all_loads_every_shipped_scenario_in_order():
    loaded = select([], tags=("faults", "slow"))
    assert {s.name for s in loaded} == {p.stem for p in SCENARIO_DIR.glob("*.toml")}
    assert not any(s.tags for s in select([])), "the fault and the slow scenarios run only when asked for"
    assert len(loaded) >= 1
    assert [s.order for s in loaded] == sorted(s.order for s in loaded)
    assert all(any(step.asks for step in s.steps) for s in loaded)


def test_select_named_scenarios_sorts_them_by_order():
    names = [s.name for s in select([])]
    assert [s.name for s in select(list(reversed(names)))] == names


def test_select_accepts_a_file_path(tmp_path):
    path = write(tmp_path, HEADER + STEP_A, name="mine")
    assert [s.name for s in select([str(path)])] == ["mine"]


def test_select_unknown_name_lists_the_choices():
    with pytest.raises(UserError) as raised:
        select(["nope"])
    message = str(raised.value)
    assert "'nope'" in message
    for name in scenario_files.available():
        assert name in message


KILL_THE_APP = '\n[[steps.faults]]\nkind = "kill"\nat = "after-turn"\ntarget = "app"\n'


def test_killing_only_the_sdk_process_is_refused_on_a_simulated_host(tmp_path):
    hosts = '[hosts]\na = "namespace"\n'
    held = step("A", '["create", "tell"]', 'host = "a"') + KILL_THE_APP
    message = load_error(tmp_path, HEADER + hosts + held)
    assert "step 'A'" in message and "field 'faults'" in message and "run that step on 'local'" in message
    on_this_machine = step("A", '["create", "tell"]', "") + KILL_THE_APP
    [plan] = load(write(tmp_path, HEADER + hosts + on_this_machine, "ok")).steps[0].faults
    assert (plan.kind, plan.at, plan.turn, plan.target, plan.heal) == ("kill", "after-turn", 1, "app", None)


@pytest.mark.parametrize("fault, says", [
    ('kind = "flood"', "field 'kind' must be one of kill"),
    ('kind = "kill"\nat = "before-step"', "field 'at' must be one of after-turn, mid-turn, inside-write, inside-tool, "
                                            "inside-permission, hold"),
    ('kind = "kill"\nat = "after-turn"\nturn = 3', "has a kill at turn 3, but the step takes 1 turn(s)"),
    ('kind = "kill"\nat = "mid-turn"\nturn = 2', "has a kill at turn 2, but the step takes 1 turn(s)"),
    ('kind = "kill"\nat = "inside-write"\nturn = 2', "has a kill at turn 2, but the step takes 1 turn(s)"),
    ('kind = "kill"\nat = "after-turn"\nheal = 2', "field 'heal' is set, but a kill does not heal"),
    ('kind = "kill"\nat = "hold"', 'has a kill at "hold", but the step\'s actions have no "hold"'),
    ('kind = "kill"\ntarget = "moon"', "field 'target' must be one of worker, app"),
    ('kind = "tear-log"\ncut = -1', "field 'cut' must be from 1 to"),
    ('kind = "tear-log"\nbytes = 3', "field 'bytes' is not a known field"),
    ('kind = "partition"', "has a partition on a step that runs on 'local'"),
    ('kind = "store-outage"', "has a fault of the database server, but the scenario's store is 'home'"),
    ('kind = "cut-copy"', 'needs the step\'s home = "copied"'),
    ('kind = "disk-full"\nheal = "tomorrow"', "field 'heal' must be 'after-step' or a number of seconds"),
    ('kind = "disk-full"\nheal = inf', "field 'heal' must be a number of seconds from 0 to 600"),
])
def test_a_fault_is_checked_like_any_field(tmp_path, fault, says):
    text = HEADER + step("A", '["create", "tell"]', "") + f"\n[[steps.faults]]\n{fault}\n"
    assert says in load_error(tmp_path, text)


CONTAINERS = '[hosts]\na = "container"\nb = "namespace"\n'
ON_A = 'host = "a"\n'


@pytest.mark.parametrize("steps, field, words", [
    ('[[steps]]\nname = "A"\nhost = "b"\nhome = "anonymous"\nactions = ["create"]\n', "home",
     "only a container has an anonymous volume"),
    ('[[steps]]\nname = "A"\nactions = ["create"]\n[[steps]]\nname = "B"\nrestart = true\nactions = ["resume"]\n',
     "restart", "only a container is restarted"),
    ('[[steps]]\nname = "A"\nhost = "a"\nrestart = true\nactions = ["create"]\n', "restart",
     "no earlier step ran a container on host 'a'"),
    ('[[steps]]\nname = "A"\nhost = "a"\nactions = ["create"]\n'
     '[[steps]]\nname = "B"\nhost = "a"\nrestart = true\nhome = "own"\nactions = ["resume"]\n', "home",
     "a restarted container keeps the home it had"),
    ('[[steps]]\nname = "A"\nhost = "a"\nhome = "copied"\nactions = ["create"]\n', "home", "a volume of the engine"),
    ('[[steps]]\nname = "A"\nhost = "a"\nactions = ["create"]\n[[steps.faults]]\nkind = "tamper"\n', "faults",
     "does not reach inside the engine"),
])
def test_what_only_a_container_host_can_do_and_what_it_cannot(tmp_path, steps, field, words):
    message = load_error(tmp_path, HEADER + CONTAINERS + steps)
    assert f"field '{field}'" in message and words in message


def test_a_container_restart_and_an_anonymous_home_load(tmp_path):
    text = HEADER + CONTAINERS + STEP_A.replace('name = "A"\n', 'name = "A"\n' + ON_A + 'home = "anonymous"\n') + \
        step(extra='expect = "kept"\nrestart = true\n' + ON_A)
    loaded = load(write(tmp_path, text))
    assert [(s.host, s.home, s.restart) for s in loaded.steps] == [("a", "anonymous", False), ("a", "shared", True)]
    assert loaded.host_kinds == {"container"}


def test_steps_name_versions_and_the_scenario_its_turn_timeout_and_known_good_pairs(tmp_path):
    text = ('turn_timeout = 20\nknown_good = ["1.0.102 -> 1.0.92", " 1.0.92->1.0.40 "]\n' + HEADER + STEP_A
            + step(extra='expect = "undelivered"\nruntime = "1.0.40"\nsdk = "1.0.24"\nloaded_all_events = false'))
    loaded = load(write(tmp_path, text))
    assert (loaded.turn_timeout, loaded.known_good) == (20.0, (("1.0.102", "1.0.92"), ("1.0.92", "1.0.40")))
    assert (loaded.steps[1].runtime, loaded.steps[1].sdk, loaded.steps[1].loaded_all_events) == ("1.0.40", "1.0.24", False)
    assert (loaded.steps[0].runtime, loaded.steps[0].sdk) == (None, None)  # the default pair


@pytest.mark.parametrize("line, expected", [
    ('known_good = ["1.0.102 1.0.92"]', "field 'known_good' must list pairs such as"),
    ('known_good = ["1.0.92 -> 1.0.102"]', "is not a downgrade"),
    ('known_good = "1.0.102 -> 1.0.92"', "field 'known_good' must be list"),
    ("turn_timeout = 0", "field 'turn_timeout' must be more than 0 seconds"),
    ("turn_timeout = inf", "field 'turn_timeout' must be more than 0 seconds and at most 600, got inf"),
    ("turn_timeout = nan", "field 'turn_timeout' must be more than 0 seconds and at most 600, got nan"),
])
def test_scenario_version_fields_are_checked(tmp_path, line, expected):
    assert expected in load_error(tmp_path, line + "\n" + HEADER + STEP_A)


@pytest.mark.parametrize("kind", ["namespace", "container"])
def test_versions_run_on_the_local_host_only(tmp_path, kind):
    text = HEADER + f'[hosts]\nb = "{kind}"\n' + step("A", '["create", "tell", "close"]', 'host = "b"\nsdk = "1.0.24"')
    message = load_error(tmp_path, text)
    assert "step 'A': field 'sdk' is set on host 'b'" in message and "host 'local' only" in message


def test_the_short_texts_load_and_must_be_a_few_words_on_one_line(tmp_path):
    loaded = load(write(tmp_path, HEADER + 'proves_in_short = "p"\ndoes_not_prove_in_short = "d"\n' + STEP_A))
    assert (loaded.proves_in_short, loaded.does_not_prove_in_short) == ("p", "d")
    message = load_error(tmp_path, HEADER + f'proves_in_short = "{"word " * 20}"\n' + STEP_A)
    assert "field 'proves_in_short' must be one line of at most 80 characters" in message


def test_every_shipped_scenario_says_in_a_rung_line_of_100_columns_what_it_proves_and_not():
    from handoff.checker.verdicts import Expectation, ScenarioJudgement, TurnJudgement
    from handoff.report.terminal import WIDTH, rung_line
    from handoff.words import Verdict

    held = TurnJudgement("s", "ask", 2, None, verdict=Verdict.KEPT, expectations=(Expectation("verdict", "kept", "kept",
                                                                                              True),))
    for loaded in select([], tags=("faults",)):
        assert loaded.proves_in_short and loaded.does_not_prove_in_short, loaded.name
        judged = ScenarioJudgement(loaded.name, loaded.title, loaded.proves, loaded.does_not_prove, 1.0, (held,))
        line = rung_line(judged, loaded.proves_in_short, loaded.does_not_prove_in_short)
        assert line == f"{loaded.name} proved {loaded.proves_in_short}, not {loaded.does_not_prove_in_short}."
        assert len(line) <= WIDTH


@pytest.mark.parametrize("turn", ["tell", "look-up", "ask", "concurrent-resume-and-ask"])
def test_every_kind_of_turn_needs_a_session_opened_before_it(tmp_path, turn):
    message = load_error(tmp_path, HEADER + step(actions=f'["{turn}", "resume"]', extra=""))
    assert f"has the turn '{turn}' before any create or resume" in message


def test_a_step_says_what_it_expects_on_one_path_and_a_run_judges_it_by_its_own():
    from handoff.protocol import BYOK_PATH, COPILOT_API_PATH

    text = HEADER + STEP_A + step(extra='expect = "no-provider"\n[steps.copilot-api]\nexpect = "kept"')
    loaded = load_text(text)
    assert loaded.on_path(BYOK_PATH).steps[1].expect == "no-provider"
    assert loaded.on_path(COPILOT_API_PATH).steps[1].expect == "kept"
    assert loaded.on_path(COPILOT_API_PATH).on_path(COPILOT_API_PATH) == loaded.on_path(COPILOT_API_PATH)
    told = HEADER + step("A", '["create", "tell", "close"]', 'expect_tell = "failed-loudly"\n[steps.byok]\n'
                                                              'expect_tell = "told"')
    assert load_text(told).on_path(BYOK_PATH).steps[0].expect_tell == "told"
    assert load_text(told).on_path(COPILOT_API_PATH).steps[0].expect_tell == "failed-loudly"


@pytest.mark.parametrize("table, says", [
    ('copilot-api = "kept"', "field 'copilot-api' must be a table of expect, expect_tell and calls"),
    ('[steps.copilot-api]\nexpect = "kept"\nprovider = "passed"', "[copilot-api]: field 'provider'"),
    ('[steps.byok]\n', "[byok]: field 'expect' is missing"),
    ('[steps.copilot-api]\nexpect = "gone"', "[copilot-api]: field 'expect'"),
    ('[steps.copilot-api]\nexpect = ["kept", "kept"]', "[copilot-api]: field 'expect' lists 2 verdict(s)"),
    ('[steps.byok]\nexpect_tell = "told"', "[byok]: field 'expect_tell' is set but the step has no 'tell'"),
    ('[steps.byok]\ncalls = ["models", "chat"]', "[byok]: field 'calls' must be a list of kinds of call, each once"),
    ('calls = ["mcp", "mcp"]', "field 'calls' must be a list of kinds of call, each once"),
    ('calls = "mcp"', "field 'calls' must be list"),
])
def test_what_a_step_expects_on_a_path_is_checked_like_its_own(tmp_path, table, says):
    assert says in load_error(tmp_path, HEADER + STEP_A + step(extra=f'expect = "kept"\n{table}'))


def test_the_calls_a_step_expects_are_its_own_or_its_path_s_and_need_an_ask(tmp_path):
    from handoff.protocol import BYOK_PATH, COPILOT_API_PATH

    loaded = load_text(HEADER + STEP_A + step(extra='expect = "kept"\ncalls = []\n[steps.copilot-api]\n'
                                                     'calls = ["models", "github", "mcp"]'))
    assert loaded.on_path(BYOK_PATH).steps[1].calls == ()
    assert loaded.on_path(COPILOT_API_PATH).steps[1].calls == ("github", "mcp", "models")  # in one order
    assert load_text(HEADER + STEP_A).steps[0].calls is None  # not judged
    message = load_error(tmp_path, HEADER + step("A", '["create", "tell", "close"]', 'calls = ["models"]'))
    assert "field 'calls' is set but the step has no 'ask' turn to judge it with" in message


def load_text(text: str):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        return load(write(Path(folder), text))


@pytest.mark.parametrize("extra, field, says", [
    ('guarded = true\ndevice = "la ptop"', "device", "not a device's name"),
    ('device = "laptop"', "guarded", "set guarded = true"),
    ('guarded = true\ndevice = "laptop"\nsdk = "1.0.9"', "sdk", "the chat server runs the run's runtime"),
    ('guarded = true\ndevice = "laptop"\ntools = ["lookup_favourite"]', "tools", "none of the app's tools"),
    ('guarded = true\ndevice = "laptop"\n[[steps.faults]]\nkind = "kill"\nat = "mid-turn"', "faults",
     "the chat server is killed between turns"),
    ('guarded = true\ndevice = "laptop"\nkeeps = "history"', "keeps", "must be one of session-id, conversation"),
    ('guarded = true\nkeeps = "conversation"', "keeps", "name the browser with device"),
])
def test_a_step_in_the_chat_s_page_is_refused_what_a_person_there_cannot_have(tmp_path, extra, field, says):
    message = load_error(tmp_path, HEADER + STEP_A + step(extra=f'expect = "kept"\n{extra}'))
    assert f"step 'B'" in message and field in message and says in message


def test_a_step_in_the_chat_s_page_does_only_what_a_person_there_can(tmp_path):
    message = load_error(tmp_path, HEADER + STEP_A + step(actions='["resume", "metadata", "ask"]',
                                                          extra='expect = "kept"\nguarded = true\ndevice = "phone"'))
    assert "'metadata', which a person in the chat's page cannot do" in message
    assert "they can: ask, close, create, resume, tell" in message


def test_a_browser_runs_here_or_on_a_simulated_host_only(tmp_path):
    for kind in ("container", "ssh"):
        text = HEADER + f'[hosts]\nb = "{kind}"\n' + STEP_A + step(
            extra='expect = "kept"\nguarded = true\ndevice = "phone"\nhost = "b"')
        assert "a browser runs on host 'local' or a simulated host (namespace) only" in load_error(tmp_path, text)
    simulated = HEADER + '[hosts]\nb = "namespace"\n' + STEP_A + step(
        extra='expect = "kept"\nguarded = true\ndevice = "phone"\nhost = "b"')
    assert load(write(tmp_path, simulated, "simulated")).steps[1].host == "b"


def test_steps_in_a_browser_name_their_device_and_run_the_chat_s_worker(tmp_path):
    from handoff.coordinator.placement import step_versions
    from handoff.hosts.base import BROWSER_WORKER_MODULE

    loaded = load(write(tmp_path, HEADER + step("A", '["create", "tell", "close"]', 'guarded = true\ndevice = "laptop"')
                        + step(extra='expect = "kept"\nguarded = true\ndevice = "phone"')))
    assert [s.device for s in loaded.steps] == ["laptop", "phone"]
    assert [s.keeps for s in loaded.steps] == ["session-id"] * 2  # the lab's last step, unless a step says
    launch, _ = step_versions(loaded.steps[1])
    assert launch.command()[-2:] == ("-m", BROWSER_WORKER_MODULE) and not launch.forkable
    assert step_versions(Step("A", ("create",)))[0].forkable
