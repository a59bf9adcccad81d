"""Where the fact came from (issue 28, rung 5): the witness says where in a request it
found the fact (fact_in), telling the app's own words from text the runtime put in (a
memory block in a system or a user message); the checker makes an answer *kept* only on
the session's history, names anything else in its reason, and keeps the places with the
judgement; the HTML page says them in words."""

from __future__ import annotations

import dataclasses

import pytest

from handoff.checker.checks import judge, judge_answer, judge_scenario
from handoff.checker.verdicts import Basis
from handoff.report.html import page
from handoff.protocol import ActionDone, ActionFailed, Turn
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.witness.answer import fact_places
from handoff.witness.server import witness
from handoff.witness.tags import FACT_HEADER, request_tags
from handoff.words import FactPlace, ReplyKind, Verdict
from tests.unit.test_checker_failed_turns import TIMEOUT, answered_log
from tests.unit.test_checker_paths import FINISHED, READY, scenario, seen, step
from tests.unit.test_html_report import FACT, RECALLED, TOLD, evidence, lines, ready, run_record

STATED = FACT.stated_text
# What a memory in user-prompt mode could look like: the runtime's text around the user's
# question. Offline, runtime 1.0.102 adds none (docs/agents.md); the shape is ours.
MEMORY_BLOCK = f"<memories>\n- The user said {STATED}.\n</memories>\n\n{FACT.question_prompt}"


def user(text: str) -> dict:
    return {"role": "user", "content": text}


@pytest.mark.parametrize("messages, places", [
    ([user(f"<current_datetime>x</current_datetime>\n\n{FACT.remember_prompt}")], ("user",)),
    ([user(MEMORY_BLOCK)], ("injected",)),
    ([user(FACT.remember_prompt + "\n\n" + MEMORY_BLOCK)], ("user", "injected")),
    ([{"role": "system", "content": f"Memories: {STATED}."}, user(FACT.question_prompt)], ("system",)),
    # after a compaction: the user's words quoted, and the summary (neither is injected)
    ([user(f"<user_message>{FACT.remember_prompt}</user_message>\n<summary>The user said: {STATED}.</summary>")],
     ("user", "summary")),
    ([{"role": "tool", "content": f"Found: {STATED}."}], ("tool",)),
    ([user(FACT.question_prompt)], ()),
    # the fact's words on either side of a summary or of the app's prompt are not a statement
    # of it once that is cut out: only the summary, only the prompt
    ([user(f"{STATED[:13]}<summary>The user said: {STATED}.</summary>{STATED[13:]}")], ("summary",)),
    ([user(f"{STATED[:13]}{FACT.remember_prompt}{STATED[13:]}")], ("user",)),
])
def test_the_witness_tells_the_users_own_words_from_text_put_around_them(messages, places):
    assert fact_places(messages, STATED) == places


@pytest.mark.parametrize("messages", [
    [user(FACT.remember_prompt)], [user(MEMORY_BLOCK)], [{"role": "system", "content": f"Memories: {STATED}."}],
    [user(f"<user_message>{FACT.remember_prompt}</user_message>\n<summary>The user said: {STATED}.</summary>")],
    [{"role": "tool", "content": f"Found: {STATED}."}], [{"role": "assistant", "content": f"Noted: {STATED}."}],
])
def test_the_fact_in_another_case_is_found_nowhere(messages):
    """Each place is looked in for the fact as it was told, in its case: 'AT RISK' is
    another value (the witness recalls values as written: test_witness_answer.py)."""
    other_case = [{**message, "content": message["content"].replace(STATED, STATED.swapcase())} for message in messages]
    assert fact_places(messages, STATED) != () and fact_places(other_case, STATED) == ()


OTHER_CASE = type(FACT)(FACT.value.swapcase(), FACT.topic)  # 'aT rISK': another value


@pytest.mark.parametrize("told, other, places", [
    # the fact as told in one place of a user message, in another case in another place
    (f"<summary>The user said: {STATED}.</summary>", OTHER_CASE.remember_prompt, ("summary",)),
    (FACT.remember_prompt, f"<summary>The user said: {OTHER_CASE.stated_text}.</summary>", ("user",)),
    (FACT.remember_prompt, MEMORY_BLOCK.replace(STATED, OTHER_CASE.stated_text), ("user",)),
])
def test_each_place_in_a_user_message_looks_for_the_fact_in_its_own_case(told, other, places):
    assert fact_places([user(f"{told}\n\n{other}")], STATED) == places


def test_a_memory_block_in_a_user_message_is_recorded_as_injected_and_the_witness_does_not_answer_from_it():
    headers = request_tags("memory", "B", "local", FACT)
    seen, reply = witness({"messages": [user(MEMORY_BLOCK)]}, headers)
    assert FACT_HEADER in headers and seen.fact_sent is True and seen.fact_in == ("injected",)
    assert reply.kind == ReplyKind.NOT_KNOWN  # it recalls only what a conversation states as the app says it


@pytest.mark.parametrize("answer, sent, places, verdict, says", [
    (RECALLED, [True], [("user",)], Verdict.KEPT, "answer names the fact and the model was sent it"),
    (RECALLED, [True], [("tool",)], Verdict.KEPT, "answer names the fact and the model was sent it"),
    (RECALLED, [True], [("summary",)], Verdict.KEPT, "answer names the fact and the model was sent it"),
    (RECALLED, [True], [("assistant",)], Verdict.KEPT, "answer names the fact and the model was sent it"),
    (RECALLED, [True], [()], Verdict.KEPT, "answer names the fact and the model was sent it"),  # a record before places
    (RECALLED, [True], [("injected",)], Verdict.UNKNOWN,
     "sent it only outside the session's history (in text the runtime put into a user message, e.g. a memory)"),
    (RECALLED, [False], [("system",)], Verdict.UNKNOWN, "only outside the session's history (in a system message"),
    (RECALLED, [True, False], [("injected",), ("system",)], Verdict.UNKNOWN,
     "(in a system message and in text the runtime put into a user message, e.g. a memory)"),
    (RECALLED, [True], [("user", "system")], Verdict.KEPT, "; the fact was in a system message too, outside"),
    ("I don't know.", [False], [("system",)], Verdict.LOST,
     "the model was not sent it in the session's history (only in a system message)"),
    ("I don't know.", [False], [()], Verdict.LOST, "answer lacks the fact and the model was not sent it"),
])
def test_only_the_sessions_history_makes_an_answer_kept(answer, sent, places, verdict, says):
    got, reason, _ = judge_answer(answer, sent, FACT, places=places)
    assert got == verdict and says in reason
    if places in ([()], [("user",)], [("tool",)], [("summary",)], [("assistant",)]):
        assert reason == judge_answer(answer, sent, FACT)[1]  # nothing said about places when all is history


MEMORY = Scenario("memory", "T", "P", "D", (Step("A", ("create", "tell", "close")),
                                           Step("B", ("create", "ask", "close"), session="unknown", expect="lost")))
STEP_A = StepRecord("A", "local", "shared", "home", "id-1", lines=lines(
    ready(101), ActionDone(t=2.0, action="create", session_id="id-1", ms=5),
    Turn(t=3.0, turn=1, kind="tell", session_id="id-1", prompt=FACT.remember_prompt, answer="OK", ms=9)))
STEP_B = StepRecord("B", "local", "shared", "home", "id-2", lines=lines(
    ready(202), ActionDone(t=6.0, action="create", session_id="id-2", ms=5),
    Turn(t=7.0, turn=1, kind="ask", session_id="id-2", prompt=FACT.question_prompt, answer=RECALLED, ms=9)))


def _memory_run(sent: bool, *where: str) -> ScenarioRecord:
    asked = dataclasses.replace(evidence("B", "1", sent, ("user", MEMORY_BLOCK)), fact_in=where)
    told = dataclasses.replace(evidence("A", "1", True, TOLD), fact_in=(FactPlace.USER.value,))
    return ScenarioRecord("memory", MEMORY, [STEP_A, STEP_B], [told, asked])


@pytest.mark.parametrize("sent, where", [(True, "injected"), (False, "system")])
def test_a_new_session_that_names_the_fact_from_a_memory_is_not_kept(sent, where):
    """The negative control's turn, had memory carried the fact: not a contradiction of
    "lost" dressed as "kept", but a turn whose evidence does not rest on the history."""
    told, asked = judge_scenario(_memory_run(sent, where), FACT).turns
    assert (told.fact_in, asked.fact_in) == (("user",), (where,))
    assert asked.verdict == Verdict.UNKNOWN and asked.as_expected is None
    assert "only outside the session's history" in asked.reason


def test_the_page_says_where_the_fact_was_found():
    record = run_record(_memory_run(True, "injected"))
    html = page(record, judge(record))
    assert "Fact reached the model: yes (found in text the runtime put into a user message (not the history))" in html
    assert "the fact was in it (found in text the runtime put into a user message (not the history))" in html


@pytest.mark.parametrize("number", [1, None])
def test_an_answer_in_the_log_that_names_a_fact_sent_only_outside_the_history_is_not_undelivered(number):
    """An ask that failed for the app, its answer in the session's log: that answer is
    attributed as an answered one is, so a fact the model had only from a memory makes
    the turn unknown, not undelivered (the context kept), whether the failure gave the
    turn's number or not."""
    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    failed = ActionFailed(t=0.0, action="ask", message=TIMEOUT, turn=number)
    asked = dataclasses.replace(seen("B", 1, True), fact_in=(FactPlace.INJECTED.value,))
    record = ScenarioRecord("s", scenario(spec), [step("B", READY, failed, answered_log(RECALLED), FINISHED)],
                            [asked])
    [judged] = judge_scenario(record, FACT).turns
    assert (judged.turn, judged.verdict, judged.evidence) == (1, Verdict.UNKNOWN, Basis.LOG_AND_WIRE)
    assert judged.reason.startswith("answer names the fact, but the model was sent it only outside the session's "
                                    "history (in text the runtime put into a user message, e.g. a memory)")
    assert "(in the log; never delivered: " in judged.reason
