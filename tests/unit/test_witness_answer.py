"""The witness model: a pure function of the conversation it is sent."""

from urllib.parse import quote as url_quote

import pytest

from handoff.fact import Fact
from handoff.fact import quote
from handoff.witness.answer import NOT_KNOWN, OFF_SCRIPT, RECALLED, Reply, message_text, reply_to
from handoff.witness.evidence import EvidenceLog, read_evidence
from handoff.witness.server import FACT_HEADER, TAG_HEADERS, witness

FACT = Fact()
WRAPPED = "<current_datetime>2025-01-01T00:00:00Z</current_datetime>\n\n{}"


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


def system(text):
    return {"role": "system", "content": text}


def told_then_asked(fact=FACT):
    return [system("You are helpful."), user(fact.remember_prompt), assistant("OK"), user(fact.question_prompt)]


# reply_to


@pytest.mark.parametrize("wrap", ["{}", WRAPPED])
def test_remember_prompt_is_acknowledged(wrap):
    reply = reply_to([user(wrap.format(FACT.remember_prompt))])
    assert (reply.text, reply.kind) == ("OK", "acknowledged")


@pytest.mark.parametrize("wrap", ["{}", WRAPPED])
def test_question_recalls_a_fact_told_earlier(wrap):
    messages = [user(wrap.format(FACT.remember_prompt)), assistant("OK"), user(wrap.format(FACT.question_prompt))]
    reply = reply_to(messages)
    assert reply.kind == "recalled"
    assert FACT.is_in(reply.text)


def test_question_without_the_fact_is_not_known():
    reply = reply_to([user(FACT.question_prompt)])
    assert reply.kind == "not-known"
    assert reply.text == NOT_KNOWN.format(topic=FACT.topic)
    assert not FACT.is_in(reply.text)


def test_a_fact_on_another_topic_does_not_answer():
    other = Fact("Champions", "customer tier")
    reply = reply_to([user(other.remember_prompt), assistant("OK"), user(FACT.question_prompt)])
    assert reply.kind == "not-known"
    assert not other.is_in(reply.text)


@pytest.mark.parametrize("other_topic", ["Retail Segment", "retail  segment", " retail segment", "retail segments"])
def test_a_topic_matches_exactly_never_by_case_spacing_or_a_prefix(other_topic):
    """A topic is the user's words as given (--topic accepts any case): a remember prompt
    about another spelling of it is another topic, and never overwrites the fact (a long
    history's filler turns about "Filler Item" would have, matched without case)."""
    told, other = FACT, Fact("Loyal", other_topic)
    reply = reply_to([user(told.remember_prompt), assistant("OK"), user(other.remember_prompt), assistant("OK"),
                      user(told.question_prompt)])
    assert told.is_in(reply.text) and not other.is_in(reply.text)
    assert reply_to([user(other.remember_prompt), assistant("OK"), user(told.question_prompt)]).kind == "not-known"


def test_the_latest_value_wins():
    old, new = Fact("Hibernating"), Fact("Loyal")
    reply = reply_to([user(old.remember_prompt), assistant("OK"), user(new.remember_prompt), assistant("OK"),
                      user(FACT.question_prompt)])
    assert new.is_in(reply.text)
    assert not old.is_in(reply.text)


@pytest.mark.parametrize("value", ["O'Brien", 'say "hi"', "Ünïcödé ✓", "  two  spaces ", "back\\slash"])
def test_awkward_values_round_trip_into_the_reply(value):
    fact = Fact(value, "surname")
    reply = reply_to(told_then_asked(fact))
    # exactly the recall sentence, the value quoted as the prompt quoted it
    assert reply == Reply(RECALLED.format(topic="surname", value=quote(value)), "recalled")


def test_content_as_a_list_of_text_parts():
    parts = lambda text: {"role": "user", "content": [{"type": "image_url"}, {"type": "text", "text": text}]}  # noqa: E731
    reply = reply_to([parts(FACT.remember_prompt), assistant("OK"), parts(FACT.question_prompt)])
    assert reply.kind == "recalled"
    assert FACT.is_in(reply.text)


@pytest.mark.parametrize("speaker", [system, assistant])
def test_only_the_user_can_state_the_fact(speaker):
    reply = reply_to([speaker(FACT.remember_prompt), user(FACT.question_prompt)])
    assert reply.kind == "not-known"


@pytest.mark.parametrize("messages", [[], [system(FACT.question_prompt)], [assistant(FACT.question_prompt)]])
def test_no_user_message_is_off_script(messages):
    assert reply_to(messages) == Reply(OFF_SCRIPT, "off-script")


@pytest.mark.parametrize("content, text", [
    ("plain", "plain"),
    ([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text"}, "stray", {"type": "text", "text": "b"}],
     "a\n\nb"),
    (None, ""),
    (42, ""),
    ([{"type": "Text", "text": "a"}, {"type": "text", "text": "b"}], "b"),  # the wire's type, as written
])
def test_message_text_takes_the_text_parts_only(content, text):
    assert message_text({"role": "user", "content": content}) == text


def test_anything_else_is_off_script():
    reply = reply_to([user("What is the weather like?")])
    assert (reply.text, reply.kind) == (OFF_SCRIPT, "off-script")


# witness(): what the evidence log records


def fact_header(fact=FACT):
    return {FACT_HEADER: url_quote(fact.stated_text)}


def test_fact_sent_true_when_the_stated_text_was_in_the_conversation():
    evidence, reply = witness({"messages": told_then_asked()}, fact_header())
    assert evidence.fact_sent is True
    assert evidence.reply_kind == "recalled"
    assert evidence.reply == reply.text and FACT.is_in(reply.text)


def test_fact_sent_false_when_it_was_not():
    evidence, _ = witness({"messages": [user(FACT.question_prompt)]}, fact_header())
    assert evidence.fact_sent is False
    assert evidence.reply_kind == "not-known"


def test_fact_sent_none_without_the_header():
    evidence, _ = witness({"messages": told_then_asked()}, {})
    assert evidence.fact_sent is None


def test_fact_stated_only_in_a_system_prompt_was_not_sent():
    messages = [system(FACT.remember_prompt), user(FACT.question_prompt)]
    assert witness({"messages": messages}, fact_header())[0].fact_sent is False


@pytest.mark.parametrize("value", ["O'Brien", "Ünïcödé ✓ 100%", "a+b c\\d"])
def test_percent_encoded_header_matches_awkward_values(value):
    fact = Fact(value, "surname")
    assert witness({"messages": told_then_asked(fact)}, fact_header(fact))[0].fact_sent is True
    assert witness({"messages": told_then_asked(Fact("other", "surname"))}, fact_header(fact))[0].fact_sent is False


def test_tag_headers_are_recorded():
    headers = {TAG_HEADERS["scenario"]: "cross-process", TAG_HEADERS["step"]: "B",
               TAG_HEADERS["host"]: "local", TAG_HEADERS["turn"]: "2"}
    evidence, _ = witness({"messages": [user(FACT.question_prompt)]}, headers)
    assert (evidence.scenario, evidence.step, evidence.host, evidence.turn) == ("cross-process", "B", "local", "2")


def test_missing_tags_are_none():
    evidence, _ = witness({}, {})
    assert (evidence.scenario, evidence.step, evidence.host, evidence.turn) == (None, None, None, None)
    assert evidence.messages_received == 0
    assert evidence.reply_kind == "off-script"


def test_messages_received_counts_the_conversation_without_system_prompts():
    # a tool's result is part of the history the runtime sends; a system prompt is not
    messages = told_then_asked() + [{"role": "tool", "content": "x"}, system("again")]
    assert witness({"messages": messages}, {})[0].messages_received == 4


def test_the_witness_remembers_nothing_between_requests():
    first, _ = witness({"messages": told_then_asked()}, fact_header())
    second, reply = witness({"messages": [user(FACT.question_prompt)]}, fact_header())
    assert first.reply_kind == "recalled"
    assert second.reply_kind == "not-known"
    assert second.fact_sent is False
    assert not FACT.is_in(reply.text)


# the evidence log


def test_evidence_log_round_trip(tmp_path):
    path = tmp_path / "evidence.jsonl"
    first, _ = witness({"messages": told_then_asked(Fact("Ünïcödé ✓"))}, fact_header(Fact("Ünïcödé ✓")))
    second, _ = witness({"messages": []}, {})
    log = EvidenceLog(path)
    log.write(first)
    log.write(second)
    assert read_evidence(path) == [first, second]


def test_a_missing_evidence_log_means_no_requests(tmp_path):
    assert read_evidence(tmp_path / "absent.jsonl") == []


def test_an_evidence_log_without_a_path_writes_nothing(tmp_path):
    EvidenceLog(None).write(witness({}, {})[0])
    assert list(tmp_path.iterdir()) == []


def test_the_record_keeps_the_conversation_it_was_sent_without_system_prompts():
    evidence, _ = witness({"messages": [system("a long system prompt")] + told_then_asked()}, fact_header())
    assert [role for role, _ in evidence.conversation] == ["user", "assistant", "user"]
    assert FACT.stated_text in evidence.conversation[0][1]


def test_the_kept_conversation_is_bounded_however_long_the_session():
    from handoff.witness.server import KEPT_CHARACTERS, KEPT_MESSAGES

    messages = [user("x" * 5000) for _ in range(50)] + told_then_asked()
    evidence, _ = witness({"messages": messages}, fact_header())
    assert evidence.messages_received == 53 and len(evidence.conversation) == KEPT_MESSAGES
    assert max(len(text) for _, text in evidence.conversation) == KEPT_CHARACTERS
    assert evidence.conversation[-1] == ("user", FACT.question_prompt)  # the latest messages are the ones kept


@pytest.mark.parametrize("role", ["User", "USER", "Tool", "Assistant"])
def test_roles_are_the_wire_s_own_words_matched_as_written(role):
    """The wire's roles are lower case: a message of another role is none of the roles, in
    what the witness answers, counts and finds the fact in."""
    from handoff.witness.answer import conversation, fact_places

    told = {"role": role, "content": FACT.remember_prompt}
    assert reply_to([told, user(FACT.question_prompt)]).kind == "not-known"
    assert reply_to([told]).kind == "off-script"
    assert conversation([told]) == [] and fact_places([told], FACT.stated_text) == ()


def test_a_compaction_request_gets_a_summary_even_when_the_last_message_is_a_tool_s_result():
    from handoff.words import Summary

    history = [user(FACT.remember_prompt), assistant("OK"), {"role": "tool", "content": f"Found: {FACT.stated_text}"}]
    assert reply_to(history, Summary.KEEP).kind == "summary"
    assert reply_to(history).kind != "summary"


def test_a_tool_call_is_numbered_by_the_assistant_s_calls_before_it_in_the_wire_s_role_only():
    lookup = "Look up my favourite retail segment with the lookup_fact tool. Reply with just OK."
    earlier = {"role": "Assistant", "content": "", "tool_calls": [{"id": "x", "type": "function"}]}
    assert reply_to([earlier, user(lookup)]).tool_call.call_id == "call_1"
    earlier["role"] = "assistant"
    assert reply_to([earlier, user(lookup)]).tool_call.call_id == "call_2"
