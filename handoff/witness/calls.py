"""What a request to the Copilot service that is no chat carried: the model list, the
GitHub MCP server, the GitHub API (copilot_api.route). The runtime sends these on its own
when a session starts or resumes; a run reads them to show what a session start tells the
service, step by step (scenarios/session-start-calls.toml).

A call is attributed by its token, as a chat is: the step the witness issued it to. Its
body is looked through for the step's fact and the JSON-RPC methods an MCP request names;
a gzip'd body (telemetry) is opened up to a bound. Header values are never kept, only
their names (the authorization header holds a token), and of the machine id the runtime
sends a fingerprint, which tells two machines apart without naming either.
"""

from __future__ import annotations

import hashlib
import json
import time
import zlib
from typing import Any, Mapping
from urllib.parse import unquote as url_unquote

from handoff.witness.copilot_api import Holder
from handoff.witness.evidence import Call
from handoff.witness.tags import FACT_HEADER, SESSION_HEADER, TAG_HEADERS

MACHINE_HEADER = "x-client-machine-id"
MAX_OPENED = 4_000_000  # bytes of a gzip'd body opened; past this it is looked at as it came


def observed(method: str, path: str, kind: str | None, status: int, holder: Holder | None,
             headers: Mapping[str, str], body: bytes) -> Call:
    """The call as the witness answered it. ``headers``: the request's, lower-cased."""
    tags = dict(holder.tags) if holder else {}
    text = _text(body, headers.get("content-encoding", ""))
    stated = tags.get(FACT_HEADER)
    return Call(
        at=time.time(), method=method, path=path, status=status, principal=holder.principal if holder else None,
        kind=kind, **{field: tags.get(TAG_HEADERS[field]) for field in ("scenario", "step", "host")},
        session_id=headers.get(SESSION_HEADER), rpc=rpc_methods(text),
        fact_sent=None if stated is None else url_unquote(stated) in text,
        body_bytes=len(body), headers=tuple(sorted(headers)), machine=fingerprint(headers.get(MACHINE_HEADER)),
    )


def fingerprint(value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:12]


def _text(body: bytes, encoding: str) -> str:
    if encoding.strip().lower() == "gzip":
        try:
            opened = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body, MAX_OPENED)
        except zlib.error:
            opened = body
        body = opened
    return body.decode("utf-8", "replace")


def rpc_methods(text: str) -> tuple[str, ...]:
    """The ``method`` of each JSON-RPC message in a body (one, or a batch), in order."""
    try:
        given: Any = json.loads(text) if text.strip() else None
    except ValueError:
        return ()
    messages = given if isinstance(given, list) else [given]
    return tuple(str(m["method"]) for m in messages if isinstance(m, dict) and isinstance(m.get("method"), str))
