"""`handoff resupply`: the "what the app must pass again" table, from a stored run whose
steps resume with one setting omitted or changed (the records mirror what runtime 1.0.102
did in resupply-on-resume)."""

from __future__ import annotations

from handoff.fact import Fact
from handoff.protocol import ActionFailed, Backend
from handoff.report.resupply import RESIDENT, RESUME_WINS, RESUPPLY, markdown, rows
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, Versions
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Evidence
from tests.unit.test_checker_paths import FINISHED, READY, step

FIRST = (("model", "first"), ("permission-handler", "first"), ("system-message", "first"),
         ("working-directory", "first"))
TOOL = ("lookup_favourite",)


def settings(**changed):
    return tuple(sorted({**dict(FIRST), **{k.replace("_", "-"): v for k, v in changed.items()}}.items()))


def seen(name, *, model="m", note="first", directory="/h/workdir-first", tools=TOOL + ("bash",),
         kind="acknowledged", result="Found: my favourite retail segment is 'At Risk'."):
    return [Evidence(0.0, "r", name, "local", "1", 1, False, "tool-call", "", model, (("user", "look"),),
                     tools_offered=tools, app_note=note, working_directory=directory),
            Evidence(0.0, "r", name, "local", "1", 3, True, kind, "", model, (("user", "look"), ("tool", result)),
                     fact_in=("tool",), tools_offered=tools, app_note=note, working_directory=directory)]


def record(*steps_and_evidence) -> RunRecord:
    planned = tuple(s for s, _ in steps_and_evidence)
    evidence = [e for _, seen_by in steps_and_evidence for e in seen_by]
    failed = ActionFailed(t=0.0, action="look-up", message="No GitHub OAuth token", turn=1)
    records = [step(s.name, READY, *( [failed] if s.provider == "omitted" else []), FINISHED) for s in planned]
    return RunRecord("run-9", "run", 0.0, 1.0, Versions("0", "1", "1", "3", "L", "m", 2),
                     RunOptions(Fact().value, Fact().topic, 1, Backend()),
                     [ScenarioRecord("r", Scenario("r", "T", "P", "D", planned), records, evidence)])


def test_each_varied_setting_is_one_row_with_what_the_session_used():
    run = record(
        (Step("A", ("create", "look-up"), tools=TOOL, settings=FIRST), seen("A")),
        (Step("model-omitted", ("resume", "look-up"), tools=TOOL, settings=settings(model="omitted")),
         seen("model-omitted")),
        (Step("model-second", ("resume", "look-up"), tools=TOOL, settings=settings(model="second")),
         seen("model-second", model="m-second")),
        (Step("note-omitted", ("resume", "look-up"), tools=TOOL, settings=settings(system_message="omitted")),
         seen("note-omitted", note=None)),
        (Step("dir-second", ("resume", "look-up"), tools=TOOL, settings=settings(working_directory="second")),
         seen("dir-second", directory="/h/workdir-second")),
        (Step("no-handler", ("resume", "look-up"), tools=TOOL, settings=settings(permission_handler="omitted")),
         seen("no-handler", kind="tool-failed", result="Permission denied and could not request permission")),
        (Step("no-tools", ("resume", "look-up"), settings=FIRST),
         seen("no-tools", tools=("bash",), kind="tool-failed", result="Tool 'lookup_favourite' does not exist.")),
        (Step("no-provider", ("resume", "look-up"), tools=TOOL, settings=FIRST, provider="omitted"), []),
    )
    found = {(row.setting, row.on_resume): row for row in rows(run)}
    assert {key: row.finding for key, row in found.items()} == {
        ("model", "omitted"): RESIDENT, ("model", "changed"): RESUME_WINS,
        ("system-message", "omitted"): RESUPPLY, ("working-directory", "changed"): RESUME_WINS,
        ("permission-handler", "omitted"): RESUPPLY, ("tools", "omitted"): RESUPPLY, ("provider", "omitted"): RESUPPLY,
    }
    assert found[("working-directory", "changed")].seen == "workdir-first -> workdir-second"
    assert "Permission denied" in found[("permission-handler", "omitted")].seen
    assert "lookup_favourite not offered" in found[("tools", "omitted")].seen
    assert "No GitHub OAuth token" in found[("provider", "omitted")].seen
    table = markdown(rows(run))
    assert table.startswith("| setting | on resume |") and table.count("\n") == 8


def test_a_step_that_creates_another_session_is_no_row():
    run = record((Step("A", ("create", "tell"), settings=(("memory", "first"),)), []),
                 (Step("C", ("create", "ask"), session="unknown", settings=(("memory", "second"),), expect="lost"), []))
    assert rows(run) == []


def test_a_run_that_varies_no_setting_says_how_to_make_one():
    run = record((Step("A", ("create", "tell")), []), (Step("B", ("resume", "ask"), expect="kept"), []))
    assert rows(run) == []
    assert "handoff run resupply-on-resume" in markdown([])
