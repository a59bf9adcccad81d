"""A step's calls to the service besides its chats (issue 49): judged against the kinds its
scenario names, none carrying the fact or the session's id; drawn as one message in the
scenario's diagram."""

from __future__ import annotations

from handoff.checker.checks import _expected_calls
from handoff.report.sequence import service_calls
from handoff.witness.evidence import Call


def call(kind: str, rpc: tuple[str, ...] = (), fact_sent: bool | None = False, session_id: str | None = None,
         principal: str | None = "alice") -> Call:
    return Call(at=1.0, method="POST", path=f"/{kind}", status=404, principal=principal, kind=kind, step="A", rpc=rpc,
                fact_sent=fact_sent, session_id=session_id)


START = (call("github"), call("models"), call("mcp", ("server/discover",)), call("mcp", ("initialize",)))


def test_the_kinds_made_are_those_named_and_none_carries_the_fact_or_the_id():
    met = _expected_calls(("github", "mcp", "models"), START)
    assert (met.wanted, met.got, met.met) == ("github, mcp, models", "github, mcp, models", True)
    fewer = _expected_calls(("github", "mcp", "models"), START[:2])
    assert (fewer.got, fewer.met) == ("github, models", False)
    assert _expected_calls((), ()).met is True and _expected_calls((), ()).got == "none"
    assert _expected_calls((), START).met is False  # BYOK's none, where a runtime asked the service


def test_a_call_carrying_the_fact_or_the_session_s_id_is_not_as_expected():
    told = _expected_calls(("github", "mcp", "models"), (*START, call("github", fact_sent=True)))
    assert (told.got, told.met) == ("github, mcp, models; carrying the fact", False)
    named = _expected_calls(("github", "mcp", "models"), (*START, call("models", session_id="s-1")))
    assert (named.got, named.met) == ("github, mcp, models; carrying a session id", False)


def test_calls_the_witness_could_not_see_are_no_verdict():
    unseen = _expected_calls(("github", "mcp", "models"), None)  # the real service: no witness there
    assert (unseen.got, unseen.met) == ("—", None)


def test_the_diagram_says_which_calls_whose_token_and_what_they_carried():
    assert service_calls(list(START)) == ("also asked: the GitHub API; the model list; the GitHub MCP server ×2 "
                                          "(server/discover, initialize) — alice's token; no fact, no session id")
    assert service_calls([call("github", fact_sent=True, principal=None)]) == (
        "also asked: the GitHub API — no token it issued; carrying the fact")
