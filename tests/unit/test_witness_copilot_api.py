"""The witness's Copilot-API side, decided without HTTP: which requests are the
service's, whose token sent one, and a model list the SDK reads."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from copilot.client import ModelInfo

from handoff.witness import copilot_api
from handoff.witness.evidence import Call, Evidence, EvidenceLog, read_calls, read_evidence
from handoff.witness.tally import Tally


@pytest.mark.parametrize(("path", "kind"), [
    ("/models", "models"), ("/models/", "models"), ("/copilot/models", "models"), ("/chat/completions", "chat"),
    ("/copilot/chat/completions?x=1", "chat"), ("/mcp/readonly", "mcp"), ("/copilot_internal/user", "github"),
    ("/copilot_internal/managed_settings?client_id=github%2Fcli", "github"),
    ("/github/copilot_internal/team_customizations", "github"), ("/telemetry/telemetry", "github"),
    ("/v1/models", None), ("/v1/chat/completions", None), ("/_handoff/hold", None), ("/", None),
    ("/copilot_internals", None), ("/mcp", None),
])
def test_the_service_s_requests_are_told_from_byok_s_by_path(path, kind):
    assert copilot_api.route(path) == kind


def test_a_request_s_principal_is_whose_issued_token_it_carries():
    tokens = copilot_api.issue()
    assert sorted(tokens.values()) == sorted(copilot_api.PRINCIPALS)
    assert all(token.startswith(copilot_api.TOKEN_PREFIX) and len(token) == 40 for token in tokens)
    alice = next(token for token, name in tokens.items() if name == "alice")
    holders = {token: copilot_api.Holder(name) for token, name in tokens.items()}
    assert copilot_api.holder(holders, f"Bearer {alice}") == copilot_api.Holder("alice")
    assert copilot_api.holder(holders, f"bearer {alice}") == copilot_api.Holder("alice")  # the runtime writes both
    for refused in (None, "", "Bearer", f"Token {alice}", f"Bearer {alice}x", f"Bearer {alice[:-1]}",
                    "Bearer gho_000000000000000000000000000000000000"):
        assert copilot_api.holder(holders, refused) is None
    assert copilot_api.issue() != tokens  # new tokens for every witness


def test_the_model_list_is_what_the_sdk_reads():
    listed = [ModelInfo.from_dict(entry) for entry in copilot_api.answer("models").body["data"]]
    assert [model.id for model in listed] == list(copilot_api.MODELS) == ["claude-haiku-4.5", "gpt-5-mini"]
    assert [model.name for model in listed] == list(copilot_api.MODELS)


def test_no_request_is_held_open_and_nothing_else_is_answered_with_content():
    assert copilot_api.answer("mcp").status == 404
    assert copilot_api.answer("github").status == 404
    assert copilot_api.REFUSED.status == 401


def test_calls_and_chats_share_one_log_and_are_read_apart(tmp_path):
    log_path = tmp_path / "evidence.jsonl"
    log = EvidenceLog(log_path)
    chat = Evidence(at=1.0, scenario=None, step=None, host=None, turn=None, messages_received=1, fact_sent=None,
                    reply_kind="acknowledged", reply="OK", principal="bob", session_id="s-1")
    calls = [Call(0.5, "GET", "/models", 200, "bob"), Call(2.0, "POST", "/chat/completions", 401, None)]
    log.write_call(calls[0])
    log.write(chat)
    log.write_call(calls[1])
    assert read_evidence(log_path) == [chat]
    assert read_calls(log_path) == calls


def test_the_tally_counts_each_principal_s_requests_and_where_each_fact_was():
    tally = Tally()
    assert tally.lines() == ["Seen: no request."]
    tally.call("alice")
    tally.chat("alice", {"retail segment": "Loyal"})
    tally.chat("bob", {"retail segment": "Loyal", "colour": "teal"})
    tally.chat("bob", {})
    tally.chat(None, {})
    tally.call(None)
    tally.call(None)
    assert tally.lines() == [
        "Seen: BYOK 1 (1 chat), alice 2 (1 chat), bob 2 (2 chats), refused 2 (no token, or one this witness did not issue).",
        "Fact 'Loyal' (favourite retail segment): in the chats of alice 1, bob 1.",
        "Fact 'teal' (favourite colour): in the chats of bob 1.",
    ]


def test_the_tally_stays_small_whatever_the_chats_state():
    tally = Tally()
    for number in range(1000):
        tally.chat("alice", {f"topic {number}": "v"})
    lines = tally.lines()
    assert len(lines) == 1 + 20 + 1 and lines[-1] == "Other facts, not told apart: stated 980 more time(s)."

