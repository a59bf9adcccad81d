"""The headers that tie a model request to a scenario, step, host and turn.

Their own module because the worker sets them and must not pay for importing the server.
"""

import re
from urllib.parse import quote as url_quote

from handoff.fact import Fact

# Headers a worker sets through ProviderConfig.headers to say what a request belongs to.
TAG_HEADERS = {
    "scenario": "x-handoff-scenario",
    "step": "x-handoff-step",
    "host": "x-handoff-host",
    "turn": "x-handoff-turn",
}
# What a filler turn's turn header says (a long history's, Action.FILL): not a number, so
# no judged turn of its step is joined to it.
FILLER_TURN_PREFIX = "fill-"
# The exact text that states the scenario's fact, percent-encoded (headers are ASCII).
FACT_HEADER = "x-handoff-fact"
# What the witness's compaction summary keeps (a Summary: keep or drop); without it, keep.
SUMMARY_HEADER = "x-handoff-summary"
# The runtime's own header saying what a request is for (measured on runtime 1.0.102:
# conversation-user, conversation-compaction, or absent after a tool call).
INTERACTION_HEADER = "x-interaction-type"
COMPACTION = "conversation-compaction"
# The session a request is for, as the runtime sends it on the Copilot-API path (measured
# on runtime 1.0.102; a BYOK provider's requests carry none).
SESSION_HEADER = "x-client-session-id"
# The note an app appends to the system prompt (a step's settings: system-message), and
# how the witness finds it; and where the runtime's system prompt names the session's
# working directory (measured on runtime 1.0.102).
SYSTEM_NOTE = "App note: {value}."
SYSTEM_NOTE_PATTERN = re.compile(r"App note: (?P<value>[\w-]+)\.")
WORKING_DIRECTORY_PATTERN = re.compile(r"Current working directory: (?P<path>\S+)")
# The run's secret: a witness started by `handoff run` hears only requests that carry it.
RUN_HEADER = "x-handoff-run"
RUN_TOKEN_VARIABLE = "HANDOFF_RUN_TOKEN"  # how the coordinator hands it to the witness it starts
# The Copilot API's tokens (JSON: token -> principal), handed to a witness the same way.
TOKENS_VARIABLE = "HANDOFF_WITNESS_TOKENS"


def request_tags(scenario: str, step: str, host: str, fact: Fact, run_token: str = "") -> dict[str, str]:
    """The headers that tie every model request of a step to it, and name the fact the
    witness is to look for (and the run's token, for a witness that asks for one)."""
    tags = {TAG_HEADERS["scenario"]: scenario, TAG_HEADERS["step"]: step, TAG_HEADERS["host"]: host,
            FACT_HEADER: url_quote(fact.stated_text)}
    return {**tags, RUN_HEADER: run_token} if run_token else tags


def filler_turn(number: int) -> str:
    """The turn header of a step's ``number``-th filler turn."""
    return f"{FILLER_TURN_PREFIX}{number}"


def is_filler_turn(turn: str | None) -> bool:
    return bool(turn) and turn.startswith(FILLER_TURN_PREFIX)
