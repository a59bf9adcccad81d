"""What the app passes on create and resume, as a step says: its tools (a step's
``tools``), built from the scenario's fact so that the fact reaches the model as a tool's
result instead of in a user's message, and its other settings (a step's ``settings``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Awaitable, Callable

from handoff.fact import Fact
from handoff.protocol import Backend
from handoff.witness.tags import SYSTEM_NOTE
from handoff.words import AppSetting, AppTool, SettingValue
from handoff.worker.model import second_model
from handoff.worker.sdk import RegisteredTool, SessionOptions

TOPIC_PARAMETERS = {"type": "object", "properties": {"topic": {"type": "string", "description": "what the favourite is of"}},
                    "required": ["topic"]}


def app_tools(names: tuple[str, ...], fact: Fact, settings: dict[str, str] | None = None,
              entered: Callable[[], Awaitable[None]] | None = None) -> tuple[RegisteredTool, ...]:
    """The tools ``names`` (AppTool values; the loader has checked them) for ``fact``. When
    the step measures the permission handler, they ask for permission before they run;
    ``entered`` is awaited as a call starts (the worker's hold inside a tool)."""
    asks = AppSetting.PERMISSION_HANDLER in (settings or {})
    return tuple(_built(AppTool(name), fact, asks, entered) for name in names)


def _built(tool: AppTool, fact: Fact, asks_permission: bool,
           entered: Callable[[], Awaitable[None]] | None) -> RegisteredTool:
    if tool is AppTool.LOOKUP_FAVOURITE:
        def look_up(arguments: dict[str, Any]) -> str:
            return fact.lookup_result(str(arguments.get("topic", "")))

        return RegisteredTool(tool.value, "Looks up the user's favourite of a topic.", TOPIC_PARAMETERS, look_up,
                              asks_permission, entered)
    raise ValueError(f"no tool {tool!r}")


# What the app passes for each value of a setting: a note the witness records from the
# system prompt (SYSTEM_NOTE), a directory under the step's home, the model or another
# (``second``: the path's, worker/model.py).
WORKING_DIRECTORY = "workdir-{value}"
MEMORY_MODES = {SettingValue.FIRST: "system-prompt", SettingValue.SECOND: "user-prompt"}


def session_options(settings: dict[str, str], model: str | None, home: Path,
                    asked: Callable[[], Awaitable[None]] | None = None,
                    second: Callable[[str], str] | None = None) -> SessionOptions:
    """The SessionOptions for a step's ``settings`` (AppSetting -> SettingValue); a setting
    the step leaves out is passed as every other step passes it. ``asked`` is awaited as the
    app's permission handler is asked (the worker's hold inside a permission request)."""
    def value(setting: AppSetting) -> str | None:
        return settings.get(setting)

    chosen_model = model
    if value(AppSetting.MODEL) == SettingValue.OMITTED:
        chosen_model = None
    elif value(AppSetting.MODEL) == SettingValue.SECOND and model:
        chosen_model = (second or partial(second_model, Backend()))(model)
    note = value(AppSetting.SYSTEM_MESSAGE)
    directory = value(AppSetting.WORKING_DIRECTORY)
    working_directory = None
    if directory in (SettingValue.FIRST, SettingValue.SECOND):
        working_directory = home / WORKING_DIRECTORY.format(value=directory)
        working_directory.mkdir(parents=True, exist_ok=True)
    return SessionOptions(
        model=chosen_model,
        system_note=SYSTEM_NOTE.format(value=note) if note in (SettingValue.FIRST, SettingValue.SECOND) else None,
        working_directory=str(working_directory) if working_directory else None,
        approves=value(AppSetting.PERMISSION_HANDLER) != SettingValue.OMITTED,
        memory_mode=MEMORY_MODES.get(value(AppSetting.MEMORY)),
        asked=asked,
    )
