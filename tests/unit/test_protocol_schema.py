"""The protocol's JSON Schema (handoff/protocol.schema.json) is protocol.py's, regenerated;
and it says what protocol.decode says of a line: each event it accepts, a field unknown
or missing it refuses."""

from __future__ import annotations

import json

import jsonschema
import msgspec
import pytest

from handoff import protocol_schema
from handoff.protocol import (
    ActionDone,
    ActionFailed,
    Cpu,
    EventLog,
    Finished,
    Holding,
    ProtocolViolation,
    Ready,
    Skipped,
    Turn,
    WorkerSpec,
    decode,
    encode,
)

SAMPLES = [
    Ready(t=1.0, pid=7, hostname="vm", address=None, home="/h", runtime_version="1.0.102", sdk_version="node@1.0.14",
          runtime_start_ms=600, sdk_language="node"),
    ActionDone(t=1.0, action="list", session_id="s", ms=2, listed=("s",)),
    Turn(t=1.0, turn=1, kind="ask", session_id="s", prompt="Which?", answer=None, ms=50),
    ActionFailed(t=1.0, action="ask", message="Timeout", turn=1, timeout_s=20.0),
    Skipped(t=1.0, action="ask", reason="no open session"),
    Holding(t=1.0, session_id=None, point="hold"),
    EventLog(t=1.0, session_id="s", found=True, events=3, closed_before_resume=True),
    Finished(t=1.0, ok=True, cpu_s=Cpu(worker=0.1, runtime=1.0)),
]


def validator(definition: str) -> jsonschema.Draft202012Validator:
    """The checked-in schema, narrowed to one of its definitions (``Event``, ``WorkerSpec``)."""
    schema = json.loads(protocol_schema.SCHEMA_FILE.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({**schema, "anyOf": [{"$ref": f"#/$defs/{definition}"}]})


@pytest.fixture(scope="module")
def event_schema():
    return validator("Event")


def test_the_checked_in_schema_is_what_protocol_py_generates():
    assert protocol_schema.SCHEMA_FILE.read_text(encoding="utf-8") == protocol_schema.text(), \
        "protocol.py changed: run `python -m handoff.protocol_schema` and commit handoff/protocol.schema.json"
    assert protocol_schema.main(["--check"]) == 0


def test_a_bad_argument_is_refused_with_exit_2(capsys):
    assert protocol_schema.main(["--write"]) == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_every_kind_of_event_validates(event_schema, event):
    line = encode(event)
    event_schema.validate(json.loads(line))
    assert decode(line) == event


@pytest.mark.parametrize("change", [
    {"colour": "red"},  # a field the protocol does not have
    {"event": "readied"},  # a tag no event has
    {"pid": "7"},  # a field of the wrong type
], ids=["unknown-field", "unknown-tag", "wrong-type"])
def test_what_decode_refuses_the_schema_refuses(event_schema, change):
    line = {**json.loads(encode(SAMPLES[0])), **change}
    with pytest.raises(ProtocolViolation):
        decode(json.dumps(line))
    with pytest.raises(jsonschema.ValidationError):
        event_schema.validate(line)


def test_a_missing_required_field_is_refused(event_schema):
    line = json.loads(encode(SAMPLES[2]))
    del line["answer"]  # nullable, yet required: a worker must say it got no answer
    with pytest.raises(ProtocolViolation):
        decode(json.dumps(line))
    with pytest.raises(jsonschema.ValidationError):
        event_schema.validate(line)


def test_the_spec_validates_against_its_definition():
    spec = WorkerSpec(scenario="s", step="A", host="local", runtime_path="", home="/h", witness_url="http://w",
                      fact_value="V", fact_topic="t", actions=("create",), sdk_version="node@1.0.14")
    validator("WorkerSpec").validate(msgspec.json.decode(spec.to_json()))
