"""What the witness model says, as a pure function of the conversation it is sent.

The witness has no memory: :func:`reply_to` sees only the messages of the request being
answered. So when it names a value in its answer, the value was in that request, which
means the runtime sent the earlier turn along — the session really carried the context.

Besides plain answers it speaks the two agent-shaped parts of the OpenAI wire format the
runtime uses (measured against runtime 1.0.102, see docs/agents.md):

* a **tool call**: a lookup prompt names a tool; the witness answers with ``tool_calls``
  asking for it, and on the next request reads the ``tool`` message that carries its
  result (the runtime's error text, when the tool is not there);
* a **compaction summary**: when the runtime compacts a history it sends the whole
  conversation with a request to summarise it (marked ``x-interaction-type:
  conversation-compaction``); the witness writes a summary that keeps every fact or
  drops them all, as it is told. Afterwards the runtime sends that summary inside a
  ``<summary>`` block of a user message, which the witness reads like any other.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from handoff.fact import LOOKUP_PATTERN, QUESTION_PATTERN, REMEMBER_PATTERN, STATED_PATTERN, quote, unquote
from handoff.words import FactPlace, ReplyKind, Summary

ACKNOWLEDGEMENT = "OK"
NOT_KNOWN = "I don't know: nothing in this conversation tells me your favourite {topic}."
RECALLED = "Your favourite {topic} is '{value}'."
OFF_SCRIPT = "I am the handoff witness model; I only answer the handoff prompts."
TOOL_FAILED = "The lookup gave me nothing."
SUMMARY_LEAD = "Summary of the conversation:"
SUMMARY_KEPT = "The user said: my favourite {topic} is '{value}'."
SUMMARY_EMPTY = "nothing to note."
# Where the runtime puts the summary after a compaction (measured: "Here is a summary of
# the prior context:\n<summary>\n...\n</summary>" in the first user message).
SUMMARY_BLOCK = re.compile(r"<summary>(?P<summary>.*?)</summary>", re.DOTALL)


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
    """The messages that make up the conversation: everything but system prompts (a tool's
    result is part of it: the runtime keeps it in the history it sends)."""
    return [m for m in messages if m.get("role") in ("user", "assistant", "tool")]


def _summaries(text: str) -> list[str]:
    return [match.group("summary") for match in SUMMARY_BLOCK.finditer(text)]


def facts_stated(messages: list[dict[str, Any]]) -> dict[str, str]:
    """Every favourite the conversation states, topic -> the latest value: a user's remember
    prompt (also as the runtime quotes it after a compaction), a tool's result, a summary."""
    stated: dict[str, str] = {}
    for message in messages:
        role, text = message.get("role"), message_text(message)
        if role == "user":
            matches = [*REMEMBER_PATTERN.finditer(text)]
            matches += [m for block in _summaries(text) for m in STATED_PATTERN.finditer(block)]
        elif role == "tool":
            matches = [*STATED_PATTERN.finditer(text)]
        else:
            continue
        for match in matches:
            stated[match.group("topic")] = unquote(match.group("value"))
    return stated


def remembered_value(messages: list[dict[str, Any]], topic: str) -> str | None:
    """The latest value the conversation states for ``topic``, or None."""
    return facts_stated(messages).get(topic)


def fact_places(messages: list[dict[str, Any]], stated_text: str) -> tuple[str, ...]:
    """Where in a request ``stated_text`` was, each place once, in FactPlace's order: so a
    kept answer can be put down to the history (the user's own remember prompt, a tool's
    result, a summary) or to something the runtime added (a system message such as a
    memory block, or text it put into a user message: ``injected``)."""
    found: set[str] = set()
    for message in messages:
        role, text = message.get("role"), message_text(message)
        if stated_text not in text:
            continue
        if role == "user":
            in_summary = any(stated_text in block for block in _summaries(text))
            # What is cut out leaves a line break, which no fact's text holds (a topic and a
            # value are one line: handoff/inputs.py): the text either side of it never joins
            # into a statement of the fact that the message does not make.
            outside = SUMMARY_BLOCK.sub("\n", text)
            said = [match.group(0) for match in REMEMBER_PATTERN.finditer(outside)]
            found |= {FactPlace.SUMMARY} if in_summary else set()
            found |= {FactPlace.USER} if any(stated_text in prompt for prompt in said) else set()
            found |= {FactPlace.INJECTED} if stated_text in REMEMBER_PATTERN.sub("\n", outside) else set()
        elif role in tuple(FactPlace):
            found.add(FactPlace(role))
    return tuple(place.value for place in FactPlace if place in found)


@dataclass(frozen=True)
class ToolCall:
    """One call the witness asks the runtime to make: ``call_id`` is numbered within the
    conversation (call_1, call_2, ...), so the same request gets the same call."""

    call_id: str
    name: str
    arguments: str  # JSON text, as the wire format carries it

    def wire(self) -> dict[str, Any]:
        return {"id": self.call_id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class Reply:
    text: str
    kind: str  # a ReplyKind
    tool_call: ToolCall | None = None


def reply_to(messages: list[dict[str, Any]], summary: str | None = None) -> Reply:
    """Answer the request ``messages`` from nothing but them. ``summary`` (a Summary) says
    the runtime asked for a compaction summary, and what it is to keep."""
    if summary is not None:
        return _summary(messages, Summary(summary))
    if messages and messages[-1].get("role") == "tool":
        return _after_tool(messages[-1])
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        return Reply(OFF_SCRIPT, ReplyKind.OFF_SCRIPT)
    last = message_text(users[-1])
    if REMEMBER_PATTERN.search(last):
        return Reply(ACKNOWLEDGEMENT, ReplyKind.ACKNOWLEDGED)
    lookup = LOOKUP_PATTERN.search(last)
    if lookup:
        calls_so_far = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
        arguments = json.dumps({"topic": lookup.group("topic")}, ensure_ascii=False)
        return Reply("", ReplyKind.TOOL_CALL, ToolCall(f"call_{calls_so_far + 1}", lookup.group("tool"), arguments))
    question = QUESTION_PATTERN.search(last)
    if question:
        topic = question.group("topic")
        value = remembered_value(messages, topic)
        if value is None:
            return Reply(NOT_KNOWN.format(topic=topic), ReplyKind.NOT_KNOWN)
        return Reply(RECALLED.format(topic=topic, value=quote(value)), ReplyKind.RECALLED)
    return Reply(OFF_SCRIPT, ReplyKind.OFF_SCRIPT)


def _after_tool(result: dict[str, Any]) -> Reply:
    """The runtime has run the call and sends its result: "OK" if it states a fact, as a
    remember prompt gets; otherwise (the runtime's error for a tool it does not have, a
    lookup that found nothing) a fixed sentence that names no value."""
    if STATED_PATTERN.search(message_text(result)):
        return Reply(ACKNOWLEDGEMENT, ReplyKind.ACKNOWLEDGED)
    return Reply(TOOL_FAILED, ReplyKind.TOOL_FAILED)


def _summary(messages: list[dict[str, Any]], summary: Summary) -> Reply:
    stated = facts_stated(messages) if summary is Summary.KEEP else {}
    kept = [SUMMARY_KEPT.format(topic=topic, value=quote(value)) for topic, value in stated.items()]
    return Reply(" ".join([SUMMARY_LEAD, *kept]) if kept else f"{SUMMARY_LEAD} {SUMMARY_EMPTY}", ReplyKind.SUMMARY)
