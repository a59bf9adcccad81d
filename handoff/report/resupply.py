"""What the app must pass again on a resume, as a table generated from a stored run
(`handoff resupply`; docs/agents.md holds one).

A scenario measures it when its first step creates the session with the app's settings
and each later step resumes it with one of them omitted or changed (a step's
``settings``, ``tools`` or ``provider``): the row says what that step's requests carried,
as the witness recorded them, against what the first step's carried.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from handoff.runs.history import RunHistory, ScenarioHistory, StepHistory
from handoff.runs.record import RunRecord
from handoff.scenario import Step
from handoff.witness.evidence import Evidence
from handoff.words import RESUMING_ACTIONS, AppSetting, ReplyKind, SettingValue, StepProvider

RESIDENT = "the session keeps it"
RESUPPLY = "the resume must pass it again"
RESUME_WINS = "the resume's value is used"


@dataclass(frozen=True)
class Row:
    scenario: str
    step: str
    setting: str
    on_resume: str  # "omitted" or "changed"
    seen: str  # what the step's requests carried
    finding: str


def rows(record: RunRecord) -> list[Row]:
    """A row for every resuming step of every scenario in ``record`` that varies one setting."""
    found: list[Row] = []
    for scenario in RunHistory.of(record).scenarios:
        planned = scenario.record.scenario.steps
        if not planned or not any(step.settings for step in planned):
            continue
        first = _requests(scenario, planned[0].name)
        for step in planned[1:]:
            varied = _varied(planned[0], step)
            if varied is not None and any(s.name == step.name for s in scenario.steps):
                found.append(_row(scenario, step, *varied, first))
    return found


def _varied(first: Step, step: Step) -> tuple[str, str] | None:
    """The one setting ``step`` passes otherwise than ``first``, and how: omitted or changed
    (None for a step that does not resume ``first``'s session, or varies none or several)."""
    if not any(action in RESUMING_ACTIONS for action in step.actions):
        return None
    if step.provider == StepProvider.OMITTED:
        return "provider", SettingValue.OMITTED
    if first.tools and not step.tools:
        return "tools", SettingValue.OMITTED
    before, now = dict(first.settings), dict(step.settings)
    changed = [name for name in AppSetting if before.get(name) != now.get(name)]
    if len(changed) != 1:
        return None
    return changed[0], now.get(changed[0], SettingValue.OMITTED)


def _requests(scenario: ScenarioHistory, step: str) -> tuple[Evidence, ...]:
    found = next((s for s in scenario.steps if s.name == step), None)
    return tuple(e for seen in (found.requests.values() if found else ()) for e in seen)


def _row(scenario: ScenarioHistory, step: Step, setting: str, value: str, first: tuple[Evidence, ...]) -> Row:
    history = scenario.step(step.name)
    seen = tuple(e for requests in history.requests.values() for e in requests)
    on_resume = "omitted" if value == SettingValue.OMITTED else "changed"
    shown, finding = _observed(setting, value, seen, first, history)
    return Row(scenario.record.name, step.name, setting, on_resume, shown, finding)


def _observed(setting: str, value: str, seen: tuple[Evidence, ...], first: tuple[Evidence, ...],
              history: StepHistory) -> tuple[str, str]:
    if setting == "provider":
        failed = next((f.message for f in history.said.failures), None)
        if seen:
            return f"{len(seen)} request(s) reached the model", RESIDENT
        return f"no request reached the model ({failed or 'no error'})", RESUPPLY
    if not seen:
        return "no request reached the model", "not measured"
    if setting == "tools":
        tools = {tool for e in first for tool in e.tools_offered} - {tool for e in seen for tool in e.tools_offered}
        result = _tool_result(seen)
        if tools:
            return f"{', '.join(sorted(tools))} not offered; the model's call got: {result}", RESUPPLY
        return "the same tools offered", RESIDENT
    if setting == AppSetting.PERMISSION_HANDLER:
        ran = any(e.reply_kind == ReplyKind.ACKNOWLEDGED for e in seen)
        return (f"the tool ran: {_tool_result(seen)}", RESIDENT) if ran else \
            (f"the tool did not run: {_tool_result(seen)}", RESUPPLY)
    now, then = _value(setting, seen), _value(setting, first)
    shown = f"{then or 'none'} -> {now or 'none'}"
    if value == SettingValue.OMITTED:
        return shown, RESIDENT if now is not None and now == then else RESUPPLY
    # Changed: what the requests carried is no longer what the first step's did (a model's
    # other name is the path's: worker/model.py, second_model).
    return shown, RESUME_WINS if now is not None and now != then else RESIDENT


def _value(setting: str, seen: tuple[Evidence, ...]) -> str | None:
    """What the step's last request carried of ``setting``, as the witness recorded it."""
    last = seen[-1]
    if setting == AppSetting.MODEL:
        return last.model
    if setting == AppSetting.SYSTEM_MESSAGE:
        return last.app_note
    if setting == AppSetting.WORKING_DIRECTORY:
        return PurePosixPath(last.working_directory).name if last.working_directory else None
    return None


def _tool_result(seen: tuple[Evidence, ...]) -> str:
    """The text of the last tool message the step's requests carried, cut short."""
    for evidence in reversed(seen):
        for role, text in reversed(evidence.conversation):
            if role == "tool":
                return repr(text if len(text) <= 60 else text[:59] + "…")
    return "no tool result"


def markdown(found: list[Row]) -> str:
    if not found:
        return ("No scenario in this run varies the app's settings on a resume "
                "(run `handoff run resupply-on-resume`).")
    lines = ["| setting | on resume | what the resumed session's requests carried | so |", "|---|---|---|---|"]
    for row in found:
        lines.append(f"| {row.setting} | {row.on_resume} | {row.seen.replace('|', '/')} | {row.finding} |")
    return "\n".join(lines)
