"""A crash with a permission request pending (issue 28, rung 2): the fault point
inside-permission, where the app's permission handler (with tools that ask for
permission) says holding before it answers; the loader asks for what makes the runtime
ask; the coordinator tells the worker where to hold; the handler still approves as the
SDK's approve_all does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from handoff.faults.kinds import KINDS
from handoff.scenario import FaultPlan, Step
from handoff.scenario_files import SCENARIO_DIR, load
from handoff.words import HOLD_POINTS, TURN_POINTS, AppTool, FaultKind, FaultPoint
from tests.unit.test_coordinator import by_step, run, scenario
from tests.unit.fakes import finished, ready
from tests.unit.test_scenario_loader import HEADER, load_error, write

LOOKUP = AppTool.LOOKUP_FAVOURITE
ASKING = (f'[[steps]]\nname = "A"\nactions = ["create", "look-up"]\ntools = ["{LOOKUP}"]\n'
          'settings = { "permission-handler" = "first" }\n')
FAULT = '[[steps.faults]]\nkind = "kill"\nat = "inside-permission"\n'


def test_a_kill_may_land_inside_a_permission_request_of_a_turn():
    assert FaultPoint.INSIDE_PERMISSION in KINDS[FaultKind.KILL].points
    assert FaultPoint.INSIDE_PERMISSION in HOLD_POINTS and FaultPoint.INSIDE_PERMISSION in TURN_POINTS


def test_the_step_must_have_tools_that_ask_permission(tmp_path):
    (loaded,) = load(write(tmp_path, HEADER + ASKING + FAULT)).steps
    assert (loaded.faults[0].at, loaded.faults[0].turn) == ("inside-permission", 1)
    for text in (ASKING.replace('settings = { "permission-handler" = "first" }\n', ""),  # the tool asks no one
                 ASKING.replace('"first"', '"omitted"'),  # no handler to ask: the runtime denies at once
                 ASKING.replace(f'tools = ["{LOOKUP}"]\n', "")):
        assert "the step's tools ask no permission" in load_error(tmp_path, HEADER + text + FAULT)
    past = FAULT + "turn = 2\n"
    assert "has a kill at turn 2, but the step takes 1 turn(s)" in load_error(tmp_path, HEADER + ASKING + past)


def test_the_worker_is_told_to_hold_inside_the_permission_request(tmp_path):
    def finishes(spec):
        yield ready(spec)
        yield finished()

    faulty = Step("A", ("create", "look-up"), tools=(LOOKUP,), settings=(("permission-handler", "first"),),
                  faults=(FaultPlan("kill", FaultPoint.INSIDE_PERMISSION),))
    _, host = run(scenario(faulty), tmp_path, by_step(A=finishes))
    assert [(hold.point, hold.turn) for hold in host.specs[0].holds] == [(FaultPoint.INSIDE_PERMISSION, 1)]


def test_the_apps_handler_awaits_its_hook_then_approves_as_approve_all_does():
    from copilot.session import PermissionHandler

    from handoff.worker.tools import session_options

    order = []

    async def asked():
        order.append("asked")

    handler = session_options({"permission-handler": "first"}, "m", Path("/nonexistent"), asked).arguments()[
        "on_permission_request"]
    decided = asyncio.run(handler(object(), {}))
    assert order == ["asked"] and type(decided) is type(PermissionHandler.approve_all(object(), {}))
    plain = session_options({}, "m", Path("/nonexistent")).arguments()["on_permission_request"]
    assert plain is PermissionHandler.approve_all  # no hook: the SDK's own handler, as before
    assert session_options({"permission-handler": "omitted"}, "m", Path("/x"), asked).arguments()[
        "on_permission_request"] is None


def test_the_rung_file_kills_inside_the_look_ups_permission_request():
    loaded = load(SCENARIO_DIR / "fault-kill-inside-permission.toml")
    assert loaded.tags == ("faults",)
    killed = loaded.steps[1]
    assert [(f.kind, f.at) for f in killed.faults] == [("kill", "inside-permission")]
    assert killed.actions == ("resume", "look-up") and loaded.steps[2].expect == "kept"
