"""The lab's pure parts: its id recipe, option checks, and reading the runtime's errors."""

from __future__ import annotations

import re

import pytest

from handoff.errors import UserError
from handoff.fact import Fact
from handoff.lab.caller import runtime_message
from handoff.lab.options import LabOptions, new_lab_session_id
from handoff.protocol import Backend

WITNESS = Backend("witness", "handoff-witness")


def test_ids_follow_the_labs_recipe():
    ids = {new_lab_session_id() for _ in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"sdklabs-[0-9a-f]{16}", i) and len(i) == 24 for i in ids)


@pytest.mark.parametrize("overrides, message", [
    ({"resume": "a", "session_id": "b"}, "--resume and --session-id choose the session in different ways"),
    ({"resume": "a", "resume_most_recent": True}, "--resume and --resume-most-recent"),
    ({"session_id": "a", "resume_most_recent": True}, "--session-id and --resume-most-recent"),
    ({"session_id": "../escape"}, "--session-id: an id is"),
    ({"resume": "has space"}, "--resume: an id is"),
    ({"fact": Fact(" ", "t")}, "--fact and --topic must not be empty"),
])
def test_contradictory_or_malformed_options_are_refused(tmp_path, overrides, message):
    options = LabOptions(**{"backend": WITNESS, "fact": Fact(), "home": tmp_path, **overrides})
    with pytest.raises(UserError, match=re.escape(message)):
        options.check()


def test_a_home_that_is_a_file_is_refused(tmp_path):
    file = tmp_path / "home"
    file.write_text("")
    with pytest.raises(UserError, match="is not a directory"):
        LabOptions(WITNESS, Fact(), file).check()


def test_stable_and_generated_ids_pass(tmp_path):
    (tmp_path / "session-state" / "sdklabs-0123456789abcdef").mkdir(parents=True)  # one to resume the most recent of
    for overrides in ({}, {"session_id": "analyst-demo"}, {"resume": "sdklabs-0123456789abcdef"}, {"resume_most_recent": True}):
        LabOptions(**{"backend": WITNESS, "fact": Fact(), "home": tmp_path, **overrides}).check()


@pytest.mark.parametrize("raised, expected", [
    (Exception("JSON-RPC Error -32603: Request session.resume failed with message: "
               "Failed to load session events: Session not found: nope"),
     "Failed to load session events: Session not found: nope"),
    (Exception("Session error: Authentication failed with provider at http://h/v1 (HTTP 401).\n"
               "  Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN."),
     "Authentication failed with provider at http://h/v1 (HTTP 401)."),
    (TimeoutError(), "TimeoutError"),
])
def test_runtime_messages_are_unwrapped_onto_one_line(raised, expected):
    assert runtime_message(raised) == expected


# --- why a resumed answer did not name the fact --------------------------------------------

def log(*events: tuple[str, str]) -> bytes:
    import json

    return b"\n".join(json.dumps({"type": kind, "data": {"content": text}}).encode() for kind, text in events) + b"\n"


AT_RISK, CHAMPIONS = Fact("At Risk"), Fact("Champions")
TWO_CONVERSATIONS = log(("session.start", ""), ("user.message", f"<t>x</t>\n\n{AT_RISK.remember_prompt}"),
                        ("session.start", ""), ("user.message", CHAMPIONS.remember_prompt),
                        ("user.message", AT_RISK.question_prompt))


def test_the_values_a_session_was_told_come_from_its_log():
    from handoff.lab.answers import creations, told_values

    assert told_values(TWO_CONVERSATIONS, "retail segment") == ["At Risk", "Champions"]
    assert told_values(TWO_CONVERSATIONS, "customer tier") == [] and told_values(None, "x") == []
    assert creations(TWO_CONVERSATIONS) == 2


def test_an_answer_naming_another_told_value_says_so_rather_than_that_turn_1_was_lost():
    from handoff.lab.answers import why_not_named

    answer = "Your favourite retail segment is 'At Risk'."
    told_here = why_not_named(2, answer, CHAMPIONS, TWO_CONVERSATIONS, told_here=True)
    assert told_here.startswith("turn 2: the answer names 'At Risk', not 'Champions' told in this run:")
    assert "the id was created 2 times (2 session.start events in its log), so a resume replays every" in told_here
    earlier = why_not_named(2, answer, Fact("Loyal"), TWO_CONVERSATIONS, told_here=False)
    assert earlier.startswith("turn 2: the answer names 'At Risk', which this session was told in an earlier run, "
                              "not 'Loyal' (--fact): the context was carried")
    lost = why_not_named(2, "I don't know", CHAMPIONS, TWO_CONVERSATIONS, told_here=True)
    assert lost == "turn 2: the answer does not name 'Champions': the resumed session did not carry turn 1 to the model"


# --- --show-calls -----------------------------------------------------------------------

def test_each_call_is_written_as_the_sample_writes_it_with_the_calling_process():
    from handoff.lab.calls import Calls

    calls = Calls(WITNESS, "http://127.0.0.1:1/v1", pid=42, hostname="box")
    assert calls.create("sdklabs-1") == ("  sdk: client.create_session(session_id='sdklabs-1', model='handoff-witness', "
                                         "provider={'type': 'openai', 'base_url': 'http://127.0.0.1:1/v1', "
                                         "'api_key': …})   [pid 42 on box]")
    assert calls.resume("sdklabs-1").startswith("  sdk: client.resume_session('sdklabs-1', model=")
    assert calls.send() == "  sdk: session.send_and_wait(prompt)   [pid 42 on box]"
    assert "ghp_" not in calls.create("ghp_" + "a" * 36)  # an id shaped like a token is never printed


def test_the_creating_process_is_found_in_the_stored_lab_runs(tmp_path):
    from handoff.lab.calls import Calls, Creator, created_by
    from handoff.protocol import ActionDone, Ready, encode
    from handoff.runs import store
    from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
    from handoff.scenario import Scenario, Step

    def lab_run(run_id, pid, action, command="lab"):
        lines = [encode(e).decode().strip() for e in (
            Ready(t=0.0, pid=pid, hostname="box", address=None, home="/h", runtime_version="1", sdk_version="1",
                  runtime_start_ms=1), ActionDone(t=1.0, action=action, session_id="sdklabs-1", ms=1))]
        scenario = ScenarioRecord("lab", Scenario("lab", "t", "p", "d", (Step("lab", (action,)),)),
                                  [StepRecord("lab", "local", "shared", "home", "sdklabs-1", lines=lines)])
        return RunRecord(run_id, command, 0.0, 1.0, Versions("0", "1", "1", "3", "L", "box", 1),
                         RunOptions("At Risk", "retail segment", 1, WITNESS), [scenario])

    for record in (lab_run("20260101T000000Z-aaaaaa", 7, "create"), lab_run("20260102T000000Z-bbbbbb", 8, "resume"),
                   lab_run("20260103T000000Z-cccccc", 9, "create", command="run")):
        store.save(record, tmp_path)
    assert [r.id for r in store.records(tmp_path, command="lab")] == ["20260102T000000Z-bbbbbb",
                                                                      "20260101T000000Z-aaaaaa"]
    found = created_by("sdklabs-1", store.records(tmp_path, command="lab"))
    assert found == Creator("20260101T000000Z-aaaaaa", 7, "box")
    assert created_by("sdklabs-2", store.records(tmp_path)) is None
    here = Calls(WITNESS, pid=11, hostname="box")
    assert here.created_by(found).endswith("this resume is pid 11 on box: a different process")


def test_the_options_reach_another_sdk_s_process_as_they_were_given(tmp_path):
    from handoff.lab.other_sdk import decode_options, encode_options

    given = LabOptions(Backend("openai-compatible", "m", "http://127.0.0.1:9/v1", "KEY_VAR"),
                       Fact("Ünï 'quoted'", "colour"), tmp_path / "home", resume="sdklabs-0123456789abcdef",
                       third_turn=True, show_calls=True)
    assert decode_options(encode_options(given)) == given


@pytest.mark.parametrize("version, says", [
    ("9.9.9", "SDK 9.9.9 is not pinned by this project"),
    ("1.0.25", "it is the project's own SDK: leave --sdk out"),
])
def test_an_sdk_the_lab_cannot_run_on_is_bad_input_naming_it(version, says):
    from handoff.errors import UserError
    from handoff.lab.other_sdk import lab_process

    with pytest.raises(UserError, match=f"^--sdk {re.escape(version)}: {re.escape(says)}"):
        lab_process(version)
