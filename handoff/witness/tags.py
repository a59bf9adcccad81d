"""The headers that tie a model request to a scenario, step, host and turn.

Their own module because the worker sets them and must not pay for importing the server.
"""

from urllib.parse import quote as url_quote

from handoff.fact import Fact

# Headers a worker sets through ProviderConfig.headers to say what a request belongs to.
TAG_HEADERS = {
    "scenario": "x-handoff-scenario",
    "step": "x-handoff-step",
    "host": "x-handoff-host",
    "turn": "x-handoff-turn",
}
# The exact text that states the scenario's fact, percent-encoded (headers are ASCII).
FACT_HEADER = "x-handoff-fact"


def request_tags(scenario: str, step: str, host: str, fact: Fact) -> dict[str, str]:
    """The headers that tie every model request of a step to it, and name the fact the
    witness is to look for."""
    return {TAG_HEADERS["scenario"]: scenario, TAG_HEADERS["step"]: step, TAG_HEADERS["host"]: host,
            FACT_HEADER: url_quote(fact.stated_text)}
