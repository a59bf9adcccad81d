"""The app's tools a step may register (a step's ``tools``), built from the scenario's
fact: the fact reaches the model as a tool's result instead of in a user's message."""

from __future__ import annotations

from typing import Any

from handoff.fact import Fact
from handoff.words import AppTool
from handoff.worker.sdk import RegisteredTool

TOPIC_PARAMETERS = {"type": "object", "properties": {"topic": {"type": "string", "description": "what the favourite is of"}},
                    "required": ["topic"]}


def app_tools(names: tuple[str, ...], fact: Fact) -> tuple[RegisteredTool, ...]:
    """The tools ``names`` (AppTool values; the loader has checked them) for ``fact``."""
    return tuple(_built(AppTool(name), fact) for name in names)


def _built(tool: AppTool, fact: Fact) -> RegisteredTool:
    if tool is AppTool.LOOKUP_FAVOURITE:
        def look_up(arguments: dict[str, Any]) -> str:
            return fact.lookup_result(str(arguments.get("topic", "")))

        return RegisteredTool(tool.value, "Looks up the user's favourite of a topic.", TOPIC_PARAMETERS, look_up)
    raise ValueError(f"no tool {tool!r}")
