"""The HTML diagram of agent-shaped sessions (issue 28): tool calls, the app's tool and its
result, the runtime answering a call of a tool it lacks, compaction, and memory, each drawn
where it happened in the stored record, with the fact marked on what carried it; and the
rendered page, where the witness's records of requests stay told apart from the texts
(a tool's result, a summary) that carry the fact."""

from __future__ import annotations

import dataclasses
import re

from handoff.checker.checks import judge
from handoff.protocol import ActionDone, Holding, Turn
from handoff.report.html import page
from handoff.report.sequence import MODEL, Message, sequence
from handoff.runs.history import ScenarioHistory
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.tags import COMPACTION
from handoff.words import AppTool, FaultPoint, ReplyKind
from tests.unit.test_html_report import FACT, RECALLED, evidence, lines, ready, run_record

LOOKUP = AppTool.LOOKUP_FAVOURITE
PROMPT = FACT.lookup_prompt(LOOKUP)
RESULT = FACT.lookup_result(FACT.topic)
SUMMARY = f"Summary of the conversation: The user said: {FACT.stated_text}."
MISSING = f"Tool '{LOOKUP}' does not exist. Available tools that can be called are bash, …"


def record(at: float, turn: str | None, sent: bool, *conversation, **fields):
    return dataclasses.replace(evidence("A", turn, sent, *conversation), at=at, **fields)


def call(at: float, turn: str | None = "1"):
    return record(at, turn, False, ("user", PROMPT), reply_kind=ReplyKind.TOOL_CALL, tool_called=LOOKUP, reply="")


def after(at: float, result: str, turn: str = "1"):
    return record(at, turn, FACT.stated_text in result, ("user", PROMPT), ("assistant", ""), ("tool", result),
                  reply_kind=ReplyKind.ACKNOWLEDGED)


def drawn(step: Step, said: list, seen: list) -> list[Message]:
    scenario = Scenario("agent", "T", "P", "D", (step,))
    history = ScenarioHistory.of(ScenarioRecord("agent", scenario, [StepRecord("A", "local", "shared", "home", "id-1",
                                                                               lines=lines(ready(101), *said))],
                                                seen), FACT)
    return [m for m in sequence(history).messages if m.step == "A"]


def labels(messages: list[Message]) -> list[str]:
    return [m.label for m in messages]


CREATE = ActionDone(t=2.0, action="create", session_id="id-1", ms=5)
LOOKED_UP = Turn(t=5.0, turn=1, kind="tell", session_id="id-1", prompt=PROMPT, answer="OK", ms=9)


def test_a_tool_call_its_handler_and_its_result_are_drawn_in_their_turn():
    messages = drawn(Step("A", ("create", "look-up"), tools=(LOOKUP,)), [CREATE, LOOKED_UP],
                     [call(3.0), after(4.0, RESULT)])
    shown = labels(messages)
    start = shown.index("send_and_wait: tell (9 ms)")
    assert shown[start + 1:start + 7] == [
        "request: 1 message, without", f"tool call: {LOOKUP}", f"runs the app's tool {LOOKUP}",
        f"tool result: “{RESULT}”", "request: 3 messages, with", "“OK”"]
    called, runs, result = messages[start + 2:start + 5]
    assert (called.source, called.target, runs.source, runs.target) == (MODEL, "runtime:A", "runtime:A", "worker:A")
    assert (result.source, result.target, result.fact.seen) == ("worker:A", "runtime:A", True)


def test_a_tool_the_session_lacks_is_answered_by_the_runtime_itself():
    messages = drawn(Step("A", ("create", "look-up")), [CREATE, LOOKED_UP], [call(3.0), after(4.0, MISSING)])
    note = next(m for m in messages if m.label.startswith(f"no tool {LOOKUP} here"))
    assert note.is_note and note.source == "runtime:A" and MISSING in note.label and note.fact.seen is False
    assert not any(m.label.startswith("runs the app's tool") for m in messages)


def test_a_call_the_worker_was_killed_in_shows_the_tool_running_and_no_result():
    held = Holding(t=4.0, session_id="id-1", point=FaultPoint.INSIDE_TOOL, turn=1, during="the app's tool call")
    shown = labels(drawn(Step("A", ("create", "look-up"), tools=(LOOKUP,)), [CREATE, held], [call(3.0)]))
    start = shown.index("turn 1 (never reported) request: 1 message, without")
    assert shown[start + 1:start + 4] == [f"tool call: {LOOKUP}", f"runs the app's tool {LOOKUP}",
                                          "holding at inside-tool during the app's tool call"]
    assert not any(label.startswith("tool result") for label in shown)


def test_a_compaction_is_drawn_at_the_compact_that_asked_for_it_with_its_summary():
    told = Turn(t=3.0, turn=1, kind="tell", session_id="id-1", prompt=FACT.remember_prompt, answer="OK", ms=9)
    compact = ActionDone(t=6.0, action="compact", session_id="id-1", ms=30, summary=SUMMARY)
    summary = record(5.0, None, True, ("user", FACT.remember_prompt), interaction=COMPACTION,
                     reply_kind=ReplyKind.SUMMARY, reply=SUMMARY)
    messages = drawn(Step("A", ("create", "tell", "compact")), [CREATE, told, compact],
                     [record(2.5, "1", True, ("user", FACT.remember_prompt)), summary])
    shown = labels(messages)
    start = shown.index("history.compact() — compact now")
    assert shown[start + 1:start + 4] == ["compaction request: 1 message, with", f"summary: “{SUMMARY}”",
                                          "compacted: the history replaced by the summary"]
    assert messages[start + 2].fact.seen and not any("never reported" in label for label in shown)
    dropped = dataclasses.replace(summary, reply="Summary of the conversation: nothing to note.")
    again = drawn(Step("A", ("create", "tell", "compact")), [CREATE, told, compact], [dropped])
    assert next(m for m in again if m.label.startswith("summary:")).fact.seen is False


def test_a_compaction_the_runtime_started_by_itself_is_drawn_where_it_happened():
    told = Turn(t=3.0, turn=1, kind="tell", session_id="id-1", prompt=FACT.remember_prompt, answer="OK", ms=9)
    closed = ActionDone(t=6.0, action="close", session_id="id-1", ms=5)
    summary = record(4.0, None, True, interaction=COMPACTION, reply_kind=ReplyKind.SUMMARY, reply=SUMMARY)
    shown = labels(drawn(Step("A", ("create", "tell", "close")), [CREATE, told, closed], [summary]))
    by_itself = shown.index("the runtime compacts by itself: compaction request: 0 messages, with")
    assert shown.index("send_and_wait: tell (9 ms)") < by_itself < shown.index("disconnect() — the close")


def test_memory_is_drawn_where_the_step_turned_it_on_and_a_fact_outside_the_history_is_named():
    asked = Turn(t=3.0, turn=1, kind="ask", session_id="id-1", prompt=FACT.question_prompt, answer=RECALLED, ms=9)
    system = record(2.5, "1", False, ("user", FACT.question_prompt), fact_in=("system",))
    shown = labels(drawn(Step("A", ("create", "ask"), settings=(("memory", "first"),), expect="lost"),
                         [CREATE, asked], [system]))
    assert shown[shown.index("create_session(session_id=id-1)") + 1] == "memory on: memories in the system prompt"
    assert "request: 1 message, without (in a system message: not the history)" in shown
    plain = labels(drawn(Step("A", ("create", "ask"), expect="lost"), [CREATE, asked], [system]))
    assert not any(label.startswith("memory on") for label in plain)


def test_the_page_tells_the_witnesss_records_of_requests_from_the_texts_that_carry_the_fact():
    step = Step("A", ("create", "look-up"), tools=(LOOKUP,))
    scenario = ScenarioRecord("agent", Scenario("agent", "T", "P", "D", (step,)), [
        StepRecord("A", "local", "shared", "home", "id-1", lines=lines(ready(101), CREATE, LOOKED_UP))],
        [call(3.0), after(4.0, RESULT)])
    run = run_record(scenario)
    html = page(run, judge(run))
    requests = re.findall(r'data-kind="request"[^>]*data-fact="(\w+)"', html)
    assert requests == ["absent", "seen"]  # one mark per record of a request, as the witness saw it
    assert re.findall(r'data-kind="reply"[^>]*data-carries="(\w+)"', html) == ["seen"]  # the tool's result
    assert f"runs the app&#39;s tool {LOOKUP}" in html and "tool call: lookup_favourite" in html


def test_a_call_killed_while_the_app_was_asked_for_permission_never_shows_the_tool_running():
    held = Holding(t=4.0, session_id="id-1", point=FaultPoint.INSIDE_PERMISSION, turn=1,
                   during="the app's permission handler")
    asking = Step("A", ("create", "look-up"), tools=(LOOKUP,), settings=(("permission-handler", "first"),))
    shown = labels(drawn(asking, [CREATE, held], [call(3.0)]))
    start = shown.index(f"tool call: {LOOKUP}")
    assert shown[start + 1:start + 3] == [f"asks the app's permission handler to run {LOOKUP}",
                                          "holding at inside-permission during the app's permission handler"]
    assert not any(label.startswith("runs the app's tool") for label in shown)
