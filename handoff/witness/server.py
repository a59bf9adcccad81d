"""The witness model's HTTP endpoint: a small OpenAI-compatible server.

It speaks enough of the OpenAI wire protocol for the Copilot runtime's BYOK provider:
``GET /v1/models`` and ``POST /v1/chat/completions`` as one JSON body or as a
Server-Sent Events stream. Every completion request is written to an evidence log
(JSON lines) *before* it is answered, so whoever reads the log after a turn finished
sees the request that produced the answer.

In relay mode (``upstream``) it answers nothing itself: it records the same evidence and
passes each request on to a real model's endpoint (see :mod:`handoff.witness.relay`).
"""

from __future__ import annotations

import hmac
import json
import re
import socket
import sys
import threading
import time
import uuid
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from urllib.parse import unquote as url_unquote

from handoff.witness.answer import Reply, ToolCall, conversation, fact_places, facts_stated, message_text, reply_to
from handoff.witness import calls, copilot_api
from handoff.witness.evidence import Evidence, EvidenceLog
from handoff.witness.relay import Relayed, relay
from handoff.witness.tally import Tally
from handoff.witness.tags import (
    COMPACTION,
    FACT_HEADER,
    INTERACTION_HEADER,
    RUN_HEADER,
    SESSION_HEADER,
    SUMMARY_HEADER,
    SYSTEM_NOTE_PATTERN,
    TAG_HEADERS,
    WORKING_DIRECTORY_PATTERN,
)
from handoff.words import Summary

MODEL_NAME = "handoff-witness"
# What a record keeps of the conversation a request carried (the report shows it): the
# last messages, each cut short. The runtime's system prompt and tool definitions (~40 KB
# a request) are left out; so the record stays small however long a session grows.
KEPT_MESSAGES = 12
KEPT_CHARACTERS = 600


def kept_conversation(talk: list[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    def cut(text: str) -> str:
        return text if len(text) <= KEPT_CHARACTERS else text[: KEPT_CHARACTERS - 1] + "…"

    return tuple((str(m.get("role")), cut(message_text(m))) for m in talk[-KEPT_MESSAGES:])


def observe(body: dict[str, Any], headers: dict[str, str], reply_kind: str, reply: str,
            tool_called: str | None = None) -> Evidence:
    """What one chat-completions request carried: its tags, how many conversation
    messages, whether the fact named by the fact header was among them and where in the
    request it was, the tools it offered."""
    messages = body.get("messages") or []
    talk = conversation(messages)
    system = "\n".join(message_text(m) for m in messages if m.get("role") == "system")
    stated = headers.get(FACT_HEADER)
    fact_sent, fact_in = None, ()
    if stated is not None:
        fact_text = url_unquote(stated)
        fact_sent = any(fact_text in message_text(m) for m in talk)
        fact_in = fact_places(messages, fact_text)
    return Evidence(
        at=time.time(),
        **{field: headers.get(name) for field, name in TAG_HEADERS.items()},
        messages_received=len(talk),
        fact_sent=fact_sent,
        reply_kind=reply_kind,
        reply=reply,
        model=body.get("model"),
        conversation=kept_conversation(talk),
        fact_in=fact_in,
        interaction=headers.get(INTERACTION_HEADER),
        tools_offered=tuple(_tool_names(body.get("tools"))),
        tool_called=tool_called,
        app_note=_found(SYSTEM_NOTE_PATTERN, "value", system),
        working_directory=_found(WORKING_DIRECTORY_PATTERN, "path", system),
        session_id=headers.get(SESSION_HEADER),
    )


def _found(pattern: re.Pattern[str], group: str, text: str) -> str | None:
    match = pattern.search(text)
    return match.group(group) if match else None


def _tool_names(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return []
    return [str((t.get("function") or {}).get("name")) for t in tools if isinstance(t, dict)]


def summary_asked(headers: dict[str, str]) -> str | None:
    """The Summary to write when the runtime asks for a compaction summary, else None. A
    value other than keep or drop is a ValueError (the request is answered 400)."""
    if headers.get(INTERACTION_HEADER) != COMPACTION:
        return None
    return Summary(headers.get(SUMMARY_HEADER) or Summary.KEEP)


def witness(body: dict[str, Any], headers: dict[str, str]) -> tuple[Evidence, Reply]:
    """Answer one chat-completions body and describe what was in it."""
    reply = reply_to(body.get("messages") or [], summary_asked(headers))
    called = reply.tool_call.name if reply.tool_call else None
    return observe(body, headers, reply.kind, reply.text, called), reply


MAX_BODY_BYTES = 64 << 20  # a runtime's request is ~42 KB, a long session's some MB
HOLD_SECONDS = 600.0  # a held answer is given up after this, so no thread waits forever
CONTROL = "/_handoff/"  # the coordinator's own endpoints: hold, held, release, issue


class ResponseHolds:
    """Answers the coordinator asked to hold, for a fault *while the model is answering*:
    a request for a held turn is recorded as evidence, then its answer waits until the
    coordinator releases it — so a kill lands exactly while the request is in flight,
    not after a guessed sleep. Keys are (scenario, step, turn) as the request's tags say."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._state: dict[tuple, str] = {}  # key -> "wanted" | "held" | "released"

    def want(self, key: tuple) -> None:
        with self._changed:
            self._state[key] = "wanted"

    def arrive(self, key: tuple) -> None:
        """Called for every request: blocks while its key is held."""
        with self._changed:
            if self._state.get(key) != "wanted":
                return
            self._state[key] = "held"
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._state.get(key) != "held", HOLD_SECONDS)

    def wait_held(self, key: tuple, seconds: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._state.get(key) in ("held", "released"), seconds)

    def release(self, key: tuple) -> None:
        with self._changed:
            self._state[key] = "released"
            self._changed.notify_all()


class _Handler(BaseHTTPRequestHandler):
    server_version = "HandoffWitness/1"
    protocol_version = "HTTP/1.1"
    evidence_log: EvidenceLog  # set on the subclass made by make_server
    holds: ResponseHolds  # likewise
    api_key: str | None = None  # when set, every request must carry `Authorization: Bearer <key>`
    run_token: str | None = None  # when set, every request must carry it in RUN_HEADER (_from_the_run)
    upstream: str | None = None  # relay mode: the real endpoint's base URL (…/v1) requests go on to
    tokens: dict[str, copilot_api.Holder] = {}  # the Copilot-API path: the tokens this witness issued
    issuing: threading.Lock  # one step's token at a time: each makes a new dict, read without a lock
    tally: Tally  # what it saw, counted (tally.py)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the evidence log is the record; per-request stderr lines would only be noise

    def _authorized(self) -> bool:
        """Refuse a request without the expected key as an OpenAI endpoint does (401 and an
        ``invalid_api_key`` error body), so a client's wrong-key path can be tested here."""
        if self.api_key is None:
            return True
        given = self.headers.get("authorization") or ""
        scheme, _, token = given.partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.api_key.encode()):
            return True
        self._skip_body()
        self._send_json(401, {"error": {
            "message": "Incorrect API key provided." if token else "No API key provided.",
            "type": "invalid_request_error", "param": None, "code": "invalid_api_key",
        }})
        return False

    def _from_the_run(self) -> bool:
        """With a run token (every `handoff run` sets one), only a request carrying it in
        RUN_HEADER is heard at all — model requests, which become evidence, and the
        coordinator's controls alike: another local user who reaches the port can neither
        add evidence nor hold or release an answer. The token comes on the workers' stdin,
        never on a command line; the relay does not pass it on (it is an x-handoff- tag)."""
        if self.run_token is None:
            return True
        given = self.headers.get(RUN_HEADER) or ""
        if hmac.compare_digest(given.encode(), self.run_token.encode()):
            return True
        self._skip_body()
        self._send_json(403, {"error": {"message": "not a request of this run: the run's token is missing or wrong",
                                        "type": "invalid_request_error", "code": "not_this_run"}})
        return False

    def _control(self) -> bool:
        """The coordinator's endpoints (hold, held, release, issue), never relayed or recorded."""
        if not self.path.startswith(CONTROL):
            return False
        parts = urlsplit(self.path)
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        key = (query.get("scenario"), query.get("step"), query.get("turn"))
        action = parts.path.removeprefix(CONTROL)
        body = self._body()
        if action == "issue":
            self._issue(query.get("principal"), body)
        elif action == "hold":
            self.holds.want(key)
            self._send_json(200, {"wanted": True})
        elif action == "held":
            self._send_json(200, {"held": self.holds.wait_held(key, float(query.get("seconds", "30")))})
        elif action == "release":
            self.holds.release(key)
            self._send_json(200, {"released": True})
        else:
            self._send_json(404, {"error": {"message": f"no control {action}"}})
        return True

    def _issue(self, principal: str | None, body: bytes) -> None:
        """A new token for a run's step on the Copilot-API path: its principal, and (the
        body, a JSON object) the tags its every request is to be read with."""
        if self.run_token is None:  # only a run's coordinator, who proves it with the run's token
            self._send_json(403, {"error": {"message": "this witness issues no tokens: it serves no run"}})
            return
        try:
            tags = json.loads(body or b"{}")
        except ValueError:
            tags = None
        if not principal or not isinstance(tags, dict) or not all(
                isinstance(name, str) and isinstance(value, str) for name, value in tags.items()):
            self._send_json(400, {"error": {"message": "issue takes ?principal= and a JSON object of tags"}})
            return
        token = copilot_api.new_token()
        with self.issuing:  # a new dict each time: a request matching tokens meanwhile reads the one before
            type(self).tokens = {**self.tokens, token: copilot_api.Holder(principal, tuple(sorted(tags.items())))}
        self._send_json(200, {"token": token})

    def _copilot_api(self) -> bool:
        """A request to the Copilot service or the GitHub API (copilot_api.py), answered
        here whole; False for any other. Its token is its authority, for a run's witness
        too: the runtime sends the service's own requests (models, the GitHub MCP server,
        the GitHub API) without the run's header, which only a chat could carry."""
        kind = copilot_api.route(self.path) if self.tokens else None  # a witness that issued none has no such path
        if kind is None:
            return False
        holder = copilot_api.holder(self.tokens, self.headers.get("authorization"))
        if holder is None:  # refused before its body is read: a stranger's request costs nothing
            self._skip_body()
            self._answer_call(copilot_api.REFUSED, None, kind)
        elif self._length() is None:
            self._skip_body()
            self._answer_call(copilot_api.Answer(413, {"message": f"a body is at most {MAX_BODY_BYTES} bytes"}), holder,
                              kind)
        elif kind == "chat" and self.command == "POST":
            self._chat(self._body(), holder)
        else:
            self._answer_call(copilot_api.answer(kind), holder, kind, self._body())
        return True

    def _length(self) -> int | None:
        """The body's length as the request gives it; None when that is no length or more
        than any request of the runtime's is (the connection is then closed unread)."""
        given = (self.headers.get("content-length") or "0").strip()
        if not given.isascii() or not given.isdigit() or int(given) > MAX_BODY_BYTES:
            return None
        return int(given)

    def _body(self) -> bytes:
        length = self._length()
        if length is None:
            self.close_connection = True
            return b""
        return self.rfile.read(length)

    def _skip_body(self) -> None:
        """Leave a refused request's body unread, and the connection with it: what is left
        of the body would otherwise be read as the connection's next request (runtime
        1.0.78's ``POST /models/session`` then broke the ``GET /models`` after it)."""
        self.close_connection = True

    def _no_route(self) -> None:
        self._skip_body()
        self._send_json(404, {"error": {"message": f"no route {urlsplit(self.path).path}"}})

    def _answer_call(self, answer: copilot_api.Answer, holder: copilot_api.Holder | None, kind: str | None,
                     body: bytes = b"") -> None:
        self.evidence_log.write_call(calls.observed(self.command, self.path, kind, answer.status, holder,
                                                    self._lower_headers(), body))
        self.tally.call(holder.principal if holder else None)
        self._send_json(answer.status, answer.body)

    def do_DELETE(self) -> None:
        if not self._copilot_api():
            self._no_route()

    def do_GET(self) -> None:
        if self._copilot_api() or not self._from_the_run() or self._control() or not self._authorized():
            return
        if self.upstream:
            self._send_relayed(relay(self.upstream, _after_v1(self.path), "GET", None, self._lower_headers()))
        elif self.path.rstrip("/") == "/v1/models":
            self._send_json(
                200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "owned_by": "handoff"}]}
            )
        else:
            self._no_route()

    def do_POST(self) -> None:
        if self._copilot_api() or not self._from_the_run() or self._control() or not self._authorized():
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._no_route()
            return
        if self._length() is None:
            self.close_connection = True
            self._send_json(413, {"error": {"message": f"the body is not a length of at most {MAX_BODY_BYTES} bytes"}})
            return
        self._chat(self._body())

    def _chat(self, raw: bytes, holder: copilot_api.Holder | None = None) -> None:
        """Answer a chat request (relayed, in relay mode), recorded first; ``holder``:
        whose token sent it, on the Copilot-API path."""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as error:
            self._send_json(400, {"error": {"message": f"body is not JSON: {error}"}})
            return
        # A step's token says what its request belongs to, whatever the request's own
        # headers say or leave out (the runtime's compaction request carries none of them).
        headers = {**self._lower_headers(), **dict(holder.tags if holder else ())}
        principal = holder.principal if holder else None
        held = tuple(headers.get(TAG_HEADERS[name]) for name in ("scenario", "step", "turn"))
        if self.upstream:
            self.holds.arrive(held)
            relayed = relay(self.upstream, _after_v1(self.path), "POST", raw, headers)
            self.evidence_log.write(_attributed(observe(body, headers, relayed.reply_kind, relayed.reply), principal))
            self.tally.chat(principal, facts_stated(body.get("messages") or []))
            self._send_relayed(relayed)
            return
        try:
            evidence, reply = witness(body, headers)
        except ValueError as error:  # a summary header that is neither keep nor drop
            self._send_json(400, {"error": {"message": f"{SUMMARY_HEADER}: {error}"}})
            return
        self.evidence_log.write(_attributed(evidence, principal))
        self.tally.chat(principal, facts_stated(body.get("messages") or []))
        self.holds.arrive(held)  # recorded first: the request reached the model, whatever happens next
        model = body.get("model") or MODEL_NAME
        if body.get("stream"):
            self._send_stream(model, reply, include_usage=bool((body.get("stream_options") or {}).get("include_usage")))
        else:
            self._send_json(200, _completion(model, reply))

    def _lower_headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _send_relayed(self, relayed: Relayed) -> None:
        self.send_response(relayed.status)
        self.send_header("content-type", relayed.content_type or "application/octet-stream")
        self.send_header("content-length", str(len(relayed.body)))
        self.end_headers()
        self.wfile.write(relayed.body)

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if self.close_connection:  # so that the client does not send its next request on it
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, model: str, reply: Reply, include_usage: bool) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for chunk in _chunks(model, reply, include_usage):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _attributed(evidence: Evidence, principal: str | None) -> Evidence:
    """A chat on the Copilot-API path, with whose token sent it (None: a BYOK chat)."""
    return evidence if principal is None else replace(evidence, principal=principal)


def _usage(text: str) -> dict[str, int]:
    completion = max(1, len(text.split()))
    return {"prompt_tokens": 1, "completion_tokens": completion, "total_tokens": 1 + completion}


def _message(reply: Reply) -> dict[str, Any]:
    """The assistant message of a reply: its text, or (content null) the tool call."""
    if reply.tool_call is None:
        return {"role": "assistant", "content": reply.text}
    return {"role": "assistant", "content": None, "tool_calls": [reply.tool_call.wire()]}


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.tool_call else "stop"


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": _message(reply), "finish_reason": _finish_reason(reply)}],
        "usage": _usage(reply.text),
    }


def _streamed_call(call: ToolCall) -> list[dict[str, Any]]:
    return [{"index": 0, **call.wire()}]  # a streamed call carries its index in the list


def _chunks(model: str, reply: Reply, include_usage: bool) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    delta = {"role": "assistant", "content": reply.text}
    if reply.tool_call:
        delta = {"role": "assistant", "content": None, "tool_calls": _streamed_call(reply.tool_call)}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish_reason(reply)}]},
    ]
    if include_usage:
        chunks.append({**base, "choices": [], "usage": _usage(reply.text)})
    return chunks


def _after_v1(path: str) -> str:
    """/v1/chat/completions -> /chat/completions: the upstream URL already ends in its /v1."""
    return path[3:] if path.startswith("/v1/") else path


def make_server(host: str, port: int, evidence_path: Path | None, api_key: str | None = None,
                upstream: str | None = None, run_token: str | None = None,
                tokens: dict[str, str | copilot_api.Holder] | None = None) -> ThreadingHTTPServer:
    """``api_key``: when given, BYOK requests without ``Authorization: Bearer <api_key>`` get 401.
    ``upstream``: relay every BYOK request to that endpoint instead of answering (see relay.py).
    ``run_token``: when given, BYOK requests without it in RUN_HEADER get 403 and leave no trace.
    ``tokens``: the Copilot API's tokens (token -> principal, or its Holder: a principal and
    the tags every request is read with); any other gets 401, unless
    the run's coordinator had the witness issue it to a step (CONTROL, ``issue``)."""
    handler = type("WitnessHandler", (_Handler,), {"evidence_log": EvidenceLog(evidence_path), "api_key": api_key,
                                                   "upstream": upstream, "holds": ResponseHolds(),
                                                   "run_token": run_token,
                                                   "tokens": {t: h if isinstance(h, copilot_api.Holder) else copilot_api.Holder(h)
                                                              for t, h in (tokens or {}).items()},
                                                   "issuing": threading.Lock(),
                                                   "tally": Tally()})
    host = host.removeprefix("[").removesuffix("]")  # an IPv6 address as a URL writes it
    server = type("WitnessServer", (ThreadingHTTPServer,), {"address_family": _family(host),
                                                             "handle_error": _handle_error})((host, port), handler)
    server.daemon_threads = True
    server.tally = handler.tally  # type: ignore[attr-defined]
    return server


def _handle_error(server: ThreadingHTTPServer, request: Any, client_address: Any) -> None:
    """A client gone before its answer was written (a runtime killed while its answer was
    held, as a fault mid-turn does) is no error of the witness's; anything else is, and is
    reported as the standard library reports it."""
    if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
        return
    ThreadingHTTPServer.handle_error(server, request, client_address)


def _family(host: str) -> socket.AddressFamily:
    """IPv6 for an address or name that has only an IPv6 form (``::1``), else IPv4, which
    ThreadingHTTPServer assumes. A name that does not resolve fails at bind, saying so."""
    try:
        found = {entry[0] for entry in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except (socket.gaierror, UnicodeError):
        return socket.AF_INET
    return socket.AF_INET if socket.AF_INET in found or not found else socket.AF_INET6
