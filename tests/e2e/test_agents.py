"""Agent-shaped sessions (docs/agents.md), from the default matrix's own run: what each
rung's requests carried, beyond its verdicts; and the "what the app must pass again"
table `handoff resupply` makes of it, as runtime 1.0.102 gave it."""

from __future__ import annotations

import pytest

from handoff.protocol import COPILOT_API_PATH
from handoff.report.resupply import RESIDENT, RESUME_WINS, RESUPPLY, rows
from handoff.witness.tags import COMPACTION
from handoff.words import AppTool, ReplyKind

pytestmark = pytest.mark.e2e
LOOKUP = AppTool.LOOKUP_FAVOURITE


def requests(matrix, scenario, step):
    return [e for e in matrix.scenario(scenario).evidence if e.step == step]


def test_a_tool_result_is_resumed_in_the_history(matrix):
    asked = [e for e in requests(matrix, "tool-fact-resumed-with-tool", "B") if e.reply_kind == ReplyKind.RECALLED]
    assert asked and all(e.fact_in == ("tool",) for e in asked)
    told = requests(matrix, "tool-fact-resumed-with-tool", "A")
    assert [e.reply_kind for e in told] == [ReplyKind.TOOL_CALL, ReplyKind.ACKNOWLEDGED]
    assert told[0].tool_called == LOOKUP and not told[0].fact_sent and told[1].fact_sent


def test_a_resume_without_the_tool_keeps_its_result_but_cannot_call_it(matrix):
    seen = requests(matrix, "tool-fact-resumed-without-tool", "B")
    assert seen and not any(LOOKUP in e.tools_offered for e in seen)
    assert [e.reply_kind for e in seen] == [ReplyKind.RECALLED, ReplyKind.TOOL_CALL, ReplyKind.TOOL_FAILED,
                                            ReplyKind.RECALLED]
    failed = seen[2].conversation[-1]
    assert failed[0] == "tool" and f"Tool '{LOOKUP}' does not exist" in failed[1]


def test_a_resume_loads_the_compacted_history(matrix):
    compacted = [e for e in requests(matrix, "compaction-tool-fact-kept", "A") if e.interaction == COMPACTION]
    assert len(compacted) == 1 and compacted[0].reply_kind == ReplyKind.SUMMARY and compacted[0].fact_in == ("tool",)
    (asked,) = requests(matrix, "compaction-tool-fact-kept", "B")
    assert asked.fact_in == ("summary",) and [role for role, _ in asked.conversation][-1] == "user"
    (lost,) = requests(matrix, "compaction-tool-fact-dropped", "B")
    assert lost.fact_in == () and lost.reply_kind == ReplyKind.NOT_KNOWN
    (quoted,) = requests(matrix, "compaction-told-fact-survives", "B")
    assert quoted.fact_in == ("user",) and quoted.reply_kind == ReplyKind.RECALLED


def test_memory_carries_nothing_to_a_new_session_offline(matrix):
    for step in ("B", "C"):
        seen = requests(matrix, "memory-new-session-offline", step)
        assert seen and all(e.fact_in == () and not e.fact_sent for e in seen)
        assert not any("memor" in tool.lower() for e in seen for tool in e.tools_offered)


def test_the_resupply_table_says_what_the_app_must_pass_again(matrix):
    """On the matrix's path: on BYOK the provider must be passed again; on the Copilot API
    (the default) the token is the client's, and a resume without the model keeps it."""
    found = {(row.setting, row.on_resume): row.finding for row in rows(matrix.record)}
    on_the_api = matrix.record.options.backend.path == COPILOT_API_PATH
    assert found == {
        ("model", "omitted"): RESIDENT, ("model", "changed"): RESUME_WINS,
        ("system-message", "omitted"): RESUPPLY, ("system-message", "changed"): RESUME_WINS,
        ("working-directory", "omitted"): RESIDENT, ("working-directory", "changed"): RESUME_WINS,
        ("permission-handler", "omitted"): RESUPPLY, ("tools", "omitted"): RESUPPLY,
        ("provider", "omitted"): RESIDENT if on_the_api else RESUPPLY,
    }
