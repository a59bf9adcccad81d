"""The worker protocol as a JSON Schema, generated from handoff/protocol.py's types.

A worker in another language (sdks/node/worker.mjs) cannot import protocol.py; its
contract is this schema instead, generated here so that it is never a hand-made copy:
``$defs.WorkerSpec`` is what a worker reads on stdin, ``$defs.Event`` any line it writes
(one of the tagged events, no unknown fields). The schema is checked in as
handoff/protocol.schema.json; tests/unit/test_protocol_schema.py fails when protocol.py
changed and it was not regenerated, and tests/e2e/test_node_worker.py validates every
line each worker writes against it.

``python -m handoff.protocol_schema`` rewrites the file; ``--check`` exits 1 if it is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec

from handoff.protocol import Event, WorkerSpec

SCHEMA_FILE = Path(__file__).resolve().parent / "protocol.schema.json"
_REFS = "#/$defs/{name}"


def schema() -> dict:
    """The protocol's schema: every type under ``$defs``, the spec and the events among them."""
    (spec, event), definitions = msgspec.json.schema_components([WorkerSpec, Event], ref_template=_REFS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "copilot-handoff worker protocol",
        "description": "Generated from handoff/protocol.py by `python -m handoff.protocol_schema`; do not edit.",
        "$defs": {**definitions, "Event": event},
        "anyOf": [spec, event],
    }


def text() -> str:
    """The schema as the file holds it: sorted keys, two-space indents, a final newline."""
    return json.dumps(schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print("usage: python -m handoff.protocol_schema [--check]", file=sys.stderr)
        return 2
    current = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.is_file() else None
    if argv == ["--check"]:
        if current == text():
            return 0
        print(f"{SCHEMA_FILE} is not what handoff/protocol.py says: run `python -m handoff.protocol_schema`",
              file=sys.stderr)
        return 1
    SCHEMA_FILE.write_text(text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
