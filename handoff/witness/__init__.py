"""The witness model: a deterministic OpenAI-compatible endpoint that answers only from
the conversation it is sent and records what it was sent as evidence."""
