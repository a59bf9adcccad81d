"""The headers that tie a model request to a scenario, step, host and turn.

Their own module because the worker sets them and must not pay for importing the server.
"""

# Headers a worker sets through ProviderConfig.headers to say what a request belongs to.
TAG_HEADERS = {
    "scenario": "x-handoff-scenario",
    "step": "x-handoff-step",
    "host": "x-handoff-host",
    "turn": "x-handoff-turn",
}
# The exact text that states the scenario's fact, percent-encoded (headers are ASCII).
FACT_HEADER = "x-handoff-fact"
