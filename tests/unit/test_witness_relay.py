"""Reading a relayed response: the answer text the relay records as evidence."""

import json

from handoff.witness.relay import answer_text


def test_a_json_completion_gives_its_message():
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "It was 'At Risk'."}}]}
    assert answer_text(json.dumps(body).encode(), "application/json") == "It was 'At Risk'."


def test_a_stream_gives_its_deltas_joined():
    chunks = [{"choices": [{"delta": {"role": "assistant", "content": "It was "}}]},
              {"choices": [{"delta": {"content": "'Champions'."}}]},
              {"choices": [{"delta": {}, "finish_reason": "stop"}]}, {"choices": [], "usage": {}}]
    stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    assert answer_text(stream.encode(), "text/event-stream; charset=utf-8") == "It was 'Champions'."


def test_an_error_body_gives_its_message():
    body = {"error": {"message": "Incorrect API key provided.", "code": "invalid_api_key"}}
    assert answer_text(json.dumps(body).encode(), "application/json") == "Incorrect API key provided."


def test_anything_else_is_kept_as_text():
    assert answer_text(b"<html>Bad gateway</html>", "text/html") == "<html>Bad gateway</html>"
