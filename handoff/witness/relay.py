"""Relay mode: the witness standing in front of a real OpenAI-compatible endpoint.

A real model answers in free text and may answer from what it already knows, so its
answer alone is weak evidence. The relay keeps the second witness in place: for every
request it records whether the fact was in the conversation the runtime sent, then
forwards the request (minus the ``x-handoff-*`` tags, which are ours) and hands back the
endpoint's response unchanged, status and body. Workers give the runtime the relay's URL,
so a host on the simulated LAN reaches a model that listens on this machine's loopback.

The response is read in full before it is passed back, because the evidence has to be on
disk before the runtime sees the answer (the coordinator reads the log once the worker
is done). The API key travels in the runtime's own ``Authorization`` header; the relay
never sees it anywhere else and never writes it down.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

FORWARDED_HEADERS = ("authorization", "content-type", "accept", "user-agent", "openai-organization", "openai-project")
UPSTREAM_TIMEOUT = 120.0  # a local model on a CPU can take a while for one answer
REPLY_RECORDED = 500  # characters of the answer kept as evidence


@dataclass(frozen=True)
class Relayed:
    status: int
    content_type: str
    body: bytes
    reply_kind: str  # "relayed" | "upstream HTTP <status>" | "unreachable"
    reply: str


def relay(upstream: str, path: str, method: str, body: bytes | None, headers: dict[str, str]) -> Relayed:
    """Send one request on to ``upstream`` (a base URL such as http://localhost:11434/v1)
    and return its whole response. ``path`` is the part after /v1."""
    request = urllib.request.Request(
        upstream.rstrip("/") + path, data=body, method=method,
        headers={name: value for name, value in headers.items() if name in FORWARDED_HEADERS},
    )
    try:
        with urllib.request.urlopen(request, timeout=UPSTREAM_TIMEOUT) as response:
            status, content_type, data = response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as error:
        status, content_type, data = error.code, error.headers.get("content-type", ""), error.read()
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        message = f"the handoff relay could not reach {upstream}: {reason}"
        payload = json.dumps({"error": {"message": message, "type": "relay_error", "code": "upstream_unreachable"}})
        return Relayed(502, "application/json", payload.encode(), "unreachable", message)
    kind = "relayed" if status < 400 else f"upstream HTTP {status}"
    return Relayed(status, content_type, data, kind, answer_text(data, content_type)[:REPLY_RECORDED])


def answer_text(data: bytes, content_type: str) -> str:
    """The assistant's text in a chat-completions response, a JSON body or an SSE stream;
    an error body's message; or the raw start of anything else."""
    text = data.decode("utf-8", errors="replace")
    if "text/event-stream" in content_type:
        parts = []
        for line in text.splitlines():
            payload = line.removeprefix("data:").strip()
            if not line.startswith("data:") or payload == "[DONE]":
                continue
            try:
                chunk = json.loads(payload)
            except json.JSONDecodeError:
                continue
            for choice in chunk.get("choices") or []:
                parts.append((choice.get("delta") or {}).get("content") or "")
        return "".join(parts)
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        return text
    if not isinstance(parsed, dict):
        return text
    choices = parsed.get("choices") or []
    if choices:
        return (choices[0].get("message") or {}).get("content") or ""
    error = parsed.get("error")
    return str(error.get("message", error)) if isinstance(error, dict) else text
