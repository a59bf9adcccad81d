"""The app's tools (a step's ``tools``): the loader checks them, the spec carries them, and
the worker's lookup answers with the scenario's fact, through the SDK's own Tool."""

from __future__ import annotations

import asyncio

import pytest

from handoff.coordinator.specs import worker_spec
from handoff.fact import Fact
from handoff.hosts.local import LocalHost
from handoff.protocol import Backend, WorkerSpec
from handoff.scenario_files import SCENARIO_DIR, load
from handoff.words import Action, AppTool, turns_in
from tests.unit.test_scenario_loader import HEADER, load_error, step, write

LOOKUP = AppTool.LOOKUP_FAVOURITE
TOOL_STEP = f'[[steps]]\nname = "A"\nactions = ["create", "look-up", "close"]\ntools = ["{LOOKUP}"]\n'


def test_a_step_names_the_tools_it_registers(tmp_path):
    loaded = load(write(tmp_path, HEADER + TOOL_STEP + step(extra=f'expect = "kept"\ntools = ["{LOOKUP}"]')))
    assert [s.tools for s in loaded.steps] == [(LOOKUP,), (LOOKUP,)]
    assert loaded.steps[0].tells and not loaded.steps[0].asks  # a look-up is a tell: the fact reaches the session


@pytest.mark.parametrize("tools, says", [
    ('["grep"]', "has unknown tool 'grep' (known: lookup_favourite)"),
    ('[1]', "has unknown tool 1"),
    (f'["{LOOKUP}", "{LOOKUP}"]', "names a tool twice"),
    ('"lookup_favourite"', "field 'tools'"),
])
def test_a_bad_tools_field_names_the_step_and_the_field(tmp_path, tools, says):
    message = load_error(tmp_path, HEADER + TOOL_STEP.replace(f'["{LOOKUP}"]', tools))
    assert "step 'A'" in message and says in message


def test_the_nodejs_worker_registers_no_tools(tmp_path):
    message = load_error(tmp_path, HEADER + TOOL_STEP.replace("look-up", "tell") + 'sdk = "node@1.0.14"\n')
    assert "field 'tools'" in message and "the Python worker's" in message


def test_a_look_up_is_one_turn_and_needs_an_open_session(tmp_path):
    assert turns_in(("resume", "ask", "look-up", "ask")) == 3
    message = load_error(tmp_path, HEADER + '[[steps]]\nname = "A"\nactions = ["look-up", "create"]\n')
    assert "has the turn 'look-up' before any create or resume" in message


def test_the_rung_files_load():
    for name in ("tool-fact-resumed-with-tool", "tool-fact-resumed-without-tool"):
        loaded = load(SCENARIO_DIR / f"{name}.toml")
        assert loaded.steps[0].tools == (LOOKUP,) and Action.LOOK_UP in loaded.steps[0].actions


def test_the_spec_carries_the_tools_and_leaves_them_out_when_there_are_none(tmp_path):
    loaded = load(write(tmp_path, HEADER + TOOL_STEP + step(extra='expect = "kept"')))
    specs = [worker_spec("demo", s, LocalHost("local"), "/h", None, fact=Fact(), backend=Backend(),
                         runtime_path="/r", witness_url="http://w") for s in loaded.steps]
    assert [WorkerSpec.from_json(s.to_json()).tools for s in specs] == [(LOOKUP,), ()]
    assert b'"tools"' not in specs[1].to_json()  # a worker that knows no tools reads the spec as before


def test_the_lookup_answers_with_the_fact_of_its_own_topic_only():
    from handoff.worker.tools import app_tools

    fact = Fact("O'Brien", "surname")
    (tool,) = app_tools((LOOKUP,), fact)
    assert tool.name == LOOKUP and tool.parameters["required"] == ["topic"]
    assert fact.stated_text in tool.answer({"topic": "surname"})
    assert not fact.is_in(tool.answer({"topic": "colour"})) and not fact.is_in(tool.answer({}))


def test_the_sdk_runs_the_lookup_as_a_tool_handler():
    from copilot.tools import ToolInvocation

    from handoff.worker.tools import app_tools

    sdk_tool = app_tools((LOOKUP,), Fact()).__getitem__(0).sdk_tool()
    assert (sdk_tool.name, sdk_tool.skip_permission) == (LOOKUP, True)
    result = sdk_tool.handler(ToolInvocation(tool_name=LOOKUP, arguments={"topic": Fact().topic}))
    result = asyncio.run(result) if asyncio.iscoroutine(result) else result  # the handler is async
    assert result.text_result_for_llm == Fact().lookup_result(Fact().topic)


def test_a_look_up_prompt_names_the_tool_and_not_the_fact():
    prompt = Fact().lookup_prompt(LOOKUP)
    assert LOOKUP in prompt and not Fact().is_in(prompt)


# settings: what else the app passes on create and resume


@pytest.mark.parametrize("table, says", [
    ('{ "colour" = "first" }', "has unknown setting 'colour'"),
    ('{ "model" = "third" }', "model = 'third': choose one of first, second, omitted"),
    ('{ "permission-handler" = "second" }', "the app has one handler"),
    ('"model"', "field 'settings'"),
])
def test_a_bad_settings_field_names_the_step_and_the_field(tmp_path, table, says):
    message = load_error(tmp_path, HEADER + TOOL_STEP + f"settings = {table}\n")
    assert "step 'A'" in message and says in message


def test_settings_load_in_a_fixed_order_and_travel_in_the_spec(tmp_path):
    text = HEADER + TOOL_STEP + 'settings = { "working-directory" = "second", "model" = "omitted" }\n'
    (loaded,) = load(write(tmp_path, text)).steps
    assert loaded.settings == (("model", "omitted"), ("working-directory", "second"))
    spec = worker_spec("demo", loaded, LocalHost("local"), "/h", None, fact=Fact(), backend=Backend(),
                       runtime_path="/r", witness_url="http://w")
    assert WorkerSpec.from_json(spec.to_json()).settings == {"model": "omitted", "working-directory": "second"}


def test_the_nodejs_worker_passes_no_settings(tmp_path):
    text = HEADER + '[[steps]]\nname = "A"\nactions = ["create", "tell"]\nsdk = "node@1.0.14"\nsettings = { "model" = "first" }\n'
    assert "field 'settings' is set with sdk" in load_error(tmp_path, text)


def test_session_options_follow_the_settings(tmp_path):
    from handoff.witness.tags import SYSTEM_NOTE_PATTERN
    from handoff.worker.tools import session_options

    assert session_options({}, "m", tmp_path).arguments()["model"] == "m"
    assert session_options({}, "m", tmp_path).arguments()["system_message"] is None
    second = session_options({"model": "second", "system-message": "second", "working-directory": "second"}, "m",
                             tmp_path)
    assert second.model == "m-second" and (tmp_path / "workdir-second").is_dir()
    assert SYSTEM_NOTE_PATTERN.search(second.system_note).group("value") == "second"
    omitted = session_options({"model": "omitted", "permission-handler": "omitted"}, "m", tmp_path).arguments()
    assert omitted["model"] is None and omitted["on_permission_request"] is None and omitted["memory"] is None
    assert session_options({"memory": "first"}, "m", tmp_path).arguments()["memory"] == {"enabled": True,
                                                                                        "mode": "system-prompt"}
    assert session_options({"memory": "second"}, "m", tmp_path).memory_mode == "user-prompt"


def test_tools_ask_for_permission_only_when_the_handler_is_measured():
    from handoff.worker.tools import app_tools

    assert app_tools((LOOKUP,), Fact())[0].sdk_tool().skip_permission is True
    assert app_tools((LOOKUP,), Fact(), {"permission-handler": "omitted"})[0].sdk_tool().skip_permission is False


# compaction: the action and what the witness's summary is to keep


def test_a_step_says_what_the_compaction_summary_keeps_and_its_spec_tells_the_witness(tmp_path):
    from handoff.witness.tags import SUMMARY_HEADER

    text = HEADER + TOOL_STEP.replace('"look-up", "close"', '"look-up", "compact", "close"') + 'summary = "drop"\n'
    (loaded,) = load(write(tmp_path, text)).steps
    assert loaded.summary == "drop" and Action.COMPACT in loaded.actions and turns_in(loaded.actions) == 1
    spec = worker_spec("demo", loaded, LocalHost("local"), "/h", None, fact=Fact(), backend=Backend(),
                       runtime_path="/r", witness_url="http://w")
    assert spec.tags[SUMMARY_HEADER] == "drop"
    plain = load(write(tmp_path, HEADER + TOOL_STEP, name="plain")).steps[0]
    assert SUMMARY_HEADER not in worker_spec("demo", plain, LocalHost("local"), "/h", None, fact=Fact(),
                                             backend=Backend(), runtime_path="/r", witness_url="http://w").tags


def test_a_summary_other_than_keep_or_drop_is_refused(tmp_path):
    message = load_error(tmp_path, HEADER + TOOL_STEP + 'summary = "some"\n')
    assert "field 'summary'" in message and "keep" in message


def test_the_compaction_rung_files_load():
    expected = {"compaction-tool-fact-kept": ("keep", "kept"), "compaction-tool-fact-dropped": ("drop", "lost"),
                "compaction-told-fact-survives": ("drop", "kept")}
    for name, (summary, verdict) in expected.items():
        first, resumed = load(SCENARIO_DIR / f"{name}.toml").steps
        assert Action.COMPACT in first.actions and first.summary == summary and resumed.expect == verdict


# a fault inside the app's tool call


def test_a_fault_inside_a_tool_needs_a_step_that_registers_one(tmp_path):
    faulted = '[[steps.faults]]\nkind = "kill"\nat = "inside-tool"\n'
    plain = '[[steps]]\nname = "A"\nactions = ["create", "look-up"]\n'
    assert "registers no tool" in load_error(tmp_path, HEADER + plain + faulted)
    (loaded,) = load(write(tmp_path, HEADER + TOOL_STEP.replace('"look-up", "close"', '"look-up"') + faulted)).steps
    assert (loaded.faults[0].at, loaded.faults[0].turn) == ("inside-tool", 1)


def test_the_tool_awaits_its_entry_hook_before_it_answers():
    from copilot.tools import ToolInvocation

    from handoff.worker.tools import app_tools

    order = []

    async def entered():
        order.append("entered")

    sdk_tool = app_tools((LOOKUP,), Fact(), entered=entered)[0].sdk_tool()
    result = asyncio.run(sdk_tool.handler(ToolInvocation(tool_name=LOOKUP, arguments={"topic": Fact().topic})))
    assert order == ["entered"] and Fact().stated_text in result.text_result_for_llm


def test_a_fault_inside_a_tool_call_past_the_steps_turns_is_refused(tmp_path):
    faulted = '[[steps.faults]]\nkind = "kill"\nat = "inside-tool"\nturn = 2\n'
    assert "has a kill at turn 2, but the step takes 1 turn(s)" in load_error(tmp_path, HEADER + TOOL_STEP + faulted)
