"""What the witness model says, as a pure function of the conversation it is sent.

The witness has no memory: :func:`reply_to` sees only the messages of the request being
answered. So when it names a value in its answer, the value was in that request, which
means the runtime sent the earlier turn along — the session really carried the context.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from handoff.fact import QUESTION_PATTERN, REMEMBER_PATTERN, quote, unquote

ACKNOWLEDGEMENT = "OK"
NOT_KNOWN = "I don't know: nothing in this conversation tells me your favourite {topic}."
RECALLED = "Your favourite {topic} is '{value}'."
OFF_SCRIPT = "I am the handoff witness model; I only answer the handoff prompts."


def message_text(message: dict[str, Any]) -> str:
    """The text of one OpenAI chat message, whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages that make up the conversation: everything but system prompts."""
    return [m for m in messages if m.get("role") in ("user", "assistant")]


def remembered_value(messages: list[dict[str, Any]], topic: str) -> str | None:
    """The latest value the user asked to remember for ``topic``, or None."""
    value = None
    for message in messages:
        if message.get("role") != "user":
            continue
        for match in REMEMBER_PATTERN.finditer(message_text(message)):
            if match.group("topic") == topic:
                value = unquote(match.group("value"))
    return value


@dataclass(frozen=True)
class Reply:
    text: str
    kind: str  # "acknowledged" | "recalled" | "not-known" | "off-script"


def reply_to(messages: list[dict[str, Any]]) -> Reply:
    """Answer the last user message from nothing but ``messages``."""
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        return Reply(OFF_SCRIPT, "off-script")
    last = message_text(users[-1])
    if REMEMBER_PATTERN.search(last):
        return Reply(ACKNOWLEDGEMENT, "acknowledged")
    question = QUESTION_PATTERN.search(last)
    if question:
        topic = question.group("topic")
        value = remembered_value(messages, topic)
        if value is None:
            return Reply(NOT_KNOWN.format(topic=topic), "not-known")
        return Reply(RECALLED.format(topic=topic, value=quote(value)), "recalled")
    return Reply(OFF_SCRIPT, "off-script")
