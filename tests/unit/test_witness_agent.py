"""The witness model's agent-shaped answers: tool calls and compaction summaries, and what
its record says about where the fact was. The message shapes are the ones runtime 1.0.102
sends (measured; docs/agents.md)."""

import json
import threading
import urllib.error
import urllib.request
from urllib.parse import quote as url_quote

import pytest

from handoff.fact import Fact
from handoff.witness.answer import (ACKNOWLEDGEMENT, SUMMARY_EMPTY, SUMMARY_LEAD, TOOL_FAILED, Reply, ToolCall,
                                    reply_to)
from handoff.witness.server import make_server, witness
from handoff.witness.tags import COMPACTION, FACT_HEADER, INTERACTION_HEADER, SUMMARY_HEADER
from handoff.words import ReplyKind

FACT = Fact()
TOOL = "lookup_favourite"
# What runtime 1.0.102 sends as the first user message after a compaction: the user's
# messages quoted, then the model's summary.
AFTER_COMPACTION = ("Some of the conversation history has been summarized to free up context.\n\nYou were originally "
                    "given instructions from a user over one or more turns. Here were the user messages:\n"
                    "<user_message>\n{users}\n</user_message>\n\nHere is a summary of the prior context:\n"
                    "<summary>\n{summary}\n</summary>\n")
COMPACTION_PROMPT = "Please create a detailed summary of the conversation so far. The history is being compacted..."


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


def called(call_id, name=TOOL, topic=FACT.topic):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps({"topic": topic})}}]}


def result(call_id, text):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def looked_up(fact=FACT):
    """A lookup's whole round as the runtime sends it on the request after the tool ran."""
    return [user(fact.lookup_prompt(TOOL)), called("call_1"), result("call_1", fact.lookup_result(fact.topic))]


def fact_header(fact=FACT):
    return {FACT_HEADER: url_quote(fact.stated_text)}


# tool calls


def test_a_lookup_prompt_is_answered_with_a_call_of_the_tool_it_names():
    reply = reply_to([user("<current_datetime>x</current_datetime>\n\n" + FACT.lookup_prompt(TOOL))])
    assert reply == Reply("", ReplyKind.TOOL_CALL, ToolCall("call_1", TOOL, json.dumps({"topic": FACT.topic})))


def test_a_calls_arguments_carry_the_topic_as_written():
    """The call's arguments are in the record a person reads: a topic in any script stays
    readable there, not escaped to \\u sequences."""
    fact = Fact("Champions", "Kundenstufe für Großkunden")
    call = reply_to([user(fact.lookup_prompt(TOOL))]).tool_call
    assert call.arguments == '{"topic": "Kundenstufe für Großkunden"}'


def test_call_ids_are_numbered_within_the_conversation():
    messages = looked_up() + [assistant("OK"), user(FACT.lookup_prompt(TOOL))]
    assert reply_to(messages).tool_call.call_id == "call_2"
    assert reply_to(messages) == reply_to(messages)  # the same request, the same answer


def test_a_result_that_states_the_fact_is_acknowledged():
    assert reply_to(looked_up()) == Reply(ACKNOWLEDGEMENT, ReplyKind.ACKNOWLEDGED)


@pytest.mark.parametrize("text", ["Tool 'lookup_favourite' does not exist.", Fact().lookup_result("surname")])
def test_a_result_that_states_no_fact_is_a_failed_lookup(text):
    reply = reply_to([user(FACT.lookup_prompt(TOOL)), called("call_1"), result("call_1", text)])
    assert reply == Reply(TOOL_FAILED, ReplyKind.TOOL_FAILED)
    assert not FACT.is_in(reply.text)


def test_a_fact_from_a_tool_result_is_recalled():
    messages = looked_up() + [assistant("OK"), user(FACT.question_prompt)]
    reply = reply_to(messages)
    assert reply.kind == ReplyKind.RECALLED and FACT.is_in(reply.text)


@pytest.mark.parametrize("value", ["O'Brien", "back\\slash", "Ünïcödé ✓"])
def test_any_value_survives_the_tool_round(value):
    fact = Fact(value, "surname")
    reply = reply_to(looked_up(fact) + [assistant("OK"), user(fact.question_prompt)])
    assert fact.is_in(reply.text)


def test_the_lookup_prompt_does_not_carry_the_fact():
    assert FACT.value not in FACT.lookup_prompt(TOOL)
    reply = reply_to([user(FACT.lookup_prompt(TOOL)), assistant("OK"), user(FACT.question_prompt)])
    assert reply.kind == ReplyKind.NOT_KNOWN


def test_the_record_says_the_fact_came_in_a_tool_result_and_which_tools_were_offered():
    body = {"messages": looked_up() + [assistant("OK"), user(FACT.question_prompt)],
            "tools": [{"type": "function", "function": {"name": "bash"}}, {"type": "function", "function": {"name": TOOL}}]}
    evidence, _ = witness(body, fact_header())
    assert evidence.fact_sent is True
    assert evidence.fact_in == ("tool",)
    assert evidence.tools_offered == ("bash", TOOL)
    assert evidence.tool_called is None


def test_the_record_names_the_tool_the_witness_called():
    evidence, reply = witness({"messages": [user(FACT.lookup_prompt(TOOL))]}, fact_header())
    assert (evidence.reply_kind, evidence.tool_called, evidence.fact_sent) == ("tool-call", TOOL, False)


def test_the_record_tells_a_system_block_from_the_history():
    messages = [{"role": "system", "content": f"Memory: {FACT.stated_text}."}, user(FACT.question_prompt)]
    evidence, _ = witness({"messages": messages}, fact_header())
    assert evidence.fact_in == ("system",)
    assert evidence.fact_sent is False  # a system block is not the conversation's history
    both = [*messages[:1], user(FACT.remember_prompt), assistant("OK"), user(FACT.question_prompt)]
    assert witness({"messages": both}, fact_header())[0].fact_in == ("user", "system")


# compaction


def compaction_request(messages, summary=None):
    headers = {INTERACTION_HEADER: COMPACTION, **fact_header(), **({SUMMARY_HEADER: summary} if summary else {})}
    return {"messages": [*messages, user(COMPACTION_PROMPT)], "tool_choice": "none"}, headers


@pytest.mark.parametrize("history", [looked_up() + [assistant("OK")],
                                     [user(FACT.remember_prompt), assistant("OK")]])
def test_a_kept_summary_states_the_fact_and_a_dropped_one_does_not(history):
    kept = witness(*compaction_request(history, "keep"))[1]
    default = witness(*compaction_request(history))[1]
    dropped = witness(*compaction_request(history, "drop"))[1]
    assert kept.kind == dropped.kind == ReplyKind.SUMMARY and kept.tool_call is None
    assert FACT.stated_text in kept.text and default == kept
    assert not FACT.is_in(dropped.text)
    assert kept.text.startswith(f"{SUMMARY_LEAD} The user said: ")  # one summary, its sentences spaced
    assert dropped.text == f"{SUMMARY_LEAD} {SUMMARY_EMPTY}"  # a summary all the same, saying so


def test_a_compaction_request_is_recorded_as_one():
    evidence, _ = witness(*compaction_request(looked_up()))
    assert (evidence.interaction, evidence.reply_kind, evidence.fact_in) == (COMPACTION, "summary", ("tool",))


def test_a_summary_is_read_back_after_the_compaction_and_recorded_as_the_summary():
    summary = witness(*compaction_request(looked_up()))[1].text
    after = [user(AFTER_COMPACTION.format(users=FACT.lookup_prompt(TOOL), summary=summary)), user(FACT.question_prompt)]
    evidence, reply = witness({"messages": after}, fact_header())
    assert FACT.is_in(reply.text) and evidence.fact_in == ("summary",)
    dropped = witness(*compaction_request(looked_up(), "drop"))[1].text
    after = [user(AFTER_COMPACTION.format(users=FACT.lookup_prompt(TOOL), summary=dropped)), user(FACT.question_prompt)]
    evidence, reply = witness({"messages": after}, fact_header())
    assert reply.kind == ReplyKind.NOT_KNOWN and evidence.fact_sent is False and evidence.fact_in == ()


def test_a_remember_prompt_the_runtime_quotes_after_a_compaction_is_still_the_users():
    # runtime 1.0.102 quotes every user message in the compacted history: a fact told in
    # a user message survives a summary that drops it
    dropped = witness(*compaction_request([user(FACT.remember_prompt), assistant("OK")], "drop"))[1].text
    after = [user(AFTER_COMPACTION.format(users=FACT.remember_prompt, summary=dropped)), user(FACT.question_prompt)]
    evidence, reply = witness({"messages": after}, fact_header())
    assert FACT.is_in(reply.text) and evidence.fact_in == ("user",)


# over HTTP


@pytest.fixture
def server():
    served = make_server("127.0.0.1", 0, None)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{served.server_address[1]}/v1/chat/completions"
    served.shutdown()
    served.server_close()


def post(url, body, headers=None):
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


def test_a_tool_call_goes_out_in_the_wire_format(server):
    answer = json.loads(post(server, {"messages": [user(FACT.lookup_prompt(TOOL))]}))
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": TOOL, "arguments": json.dumps({"topic": FACT.topic})}}]}


def test_a_streamed_tool_call_carries_its_index(server):
    stream = post(server, {"messages": [user(FACT.lookup_prompt(TOOL))], "stream": True})
    chunks = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: {")]
    assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["index"] == 0
    assert chunks[1]["choices"][0]["finish_reason"] == "tool_calls"


def test_a_summary_header_that_is_neither_keep_nor_drop_is_refused(server):
    with pytest.raises(urllib.error.HTTPError) as refused:
        post(server, *compaction_request([], "sometimes"))
    assert refused.value.code == 400


def test_the_record_keeps_the_apps_note_and_the_working_directory_the_system_prompt_names():
    system = {"role": "system", "content": "You are GitHub Copilot.\n* Current working directory: /h/workdir-first\n"
                                           "App note: first."}
    evidence, _ = witness({"messages": [system, user(FACT.question_prompt)]}, fact_header())
    assert (evidence.app_note, evidence.working_directory) == ("first", "/h/workdir-first")
    bare, _ = witness({"messages": [user(FACT.question_prompt)]}, fact_header())
    assert (bare.app_note, bare.working_directory) == (None, None)


@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_the_witness_listens_on_an_ipv6_address_as_given(host):
    served = make_server(host, 0, None)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://[::1]:{served.server_address[1]}/v1/models", timeout=5) as answer:
            assert answer.status == 200
    finally:
        served.shutdown()
        served.server_close()
