"""What the witness saw in each request, as data: the records a run keeps (its evidence)
and the checker reads. The server (server.py) writes them to an append-only log while it
answers; the coordinator and the lab read that log when a scenario ends. Nothing here
serves HTTP, so a run's record can hold evidence without the server's module."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import msgspec

from handoff.protocol import Integer, Time
from handoff.words import FactPlace


@dataclass(frozen=True)
class Evidence:
    """What the witness saw in one request, as the checker reads it later."""

    at: Time
    scenario: str | None
    step: str | None
    host: str | None
    turn: str | None
    messages_received: Integer
    fact_sent: bool | None  # None when the request named no fact
    reply_kind: str
    reply: str
    model: str | None = None  # the model name the client asked for, as it arrived
    # (role, text) of the last user and assistant messages, each cut short (server.py,
    # kept_conversation): what the model was sent, as far as the report needs to show it.
    conversation: tuple[tuple[str, str], ...] = ()
    # Agent-shaped requests (records written before these were kept decode with the
    # defaults). Where the fact's text was (FactPlace values: user, tool, summary, system,
    # assistant), so a kept answer can be put down to the history or to what the runtime
    # added; the runtime's own x-interaction-type (e.g. conversation-compaction); the
    # names of the tools the request offered the model; the tool the witness called.
    fact_in: tuple[FactPlace, ...] = ()  # a stored record naming another place is no record
    interaction: str | None = None
    tools_offered: tuple[str, ...] = ()
    tool_called: str | None = None
    # What the request's system messages said of the app's settings: the app's note (a
    # step's settings: system-message) and the working directory the runtime's prompt names.
    app_note: str | None = None
    working_directory: str | None = None
    # On the Copilot-API path (copilot_api.py): the principal whose token sent the
    # request, and the session the runtime said it was for (x-client-session-id).
    principal: str | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class Call:
    """A request that was no chat — the model list, the GitHub MCP server, the GitHub
    API — or one refused (401: a token the witness did not issue), as the witness
    answered it. Kept in the same log as the chats, one ``{"call": …}`` line each."""

    at: Time
    method: str
    path: str
    status: Integer
    principal: str | None  # None: no token, or one the witness did not issue
    # What it carried (calls recorded before these were kept decode with the defaults):
    # which of the service's requests it is (copilot_api.route: models, mcp, github), the
    # step its token was issued to, the session it said it was for (x-client-session-id),
    # the JSON-RPC methods of an MCP request, whether the step's fact was in its body, the
    # names (never the values) of the headers it carried, and a fingerprint of the machine
    # id the runtime sends (x-client-machine-id): equal on one machine, never the id itself.
    kind: str | None = None
    scenario: str | None = None
    step: str | None = None
    host: str | None = None
    session_id: str | None = None
    rpc: tuple[str, ...] = ()
    fact_sent: bool | None = None  # None: no step, so no fact to look for
    body_bytes: Integer = 0
    headers: tuple[str, ...] = ()
    machine: str | None = None


CALL_KEY = "call"
_CALL_LINE = f'{{"{CALL_KEY}": '


class EvidenceLog:
    """Append-only JSON-lines file, safe to write from the server's threads."""

    def __init__(self, path: Path | None):
        self._path = path
        self._lock = threading.Lock()

    def write(self, evidence: Evidence) -> None:
        self._append(json.dumps(asdict(evidence), ensure_ascii=False) + "\n")

    def write_call(self, call: Call) -> None:
        self._append(json.dumps({CALL_KEY: asdict(call)}, ensure_ascii=False) + "\n")

    def _append(self, line: str) -> None:
        if self._path is None:
            return
        with self._lock:
            # O_NOFOLLOW: a link put in the file's place is an error, never a way to append elsewhere
            descriptor = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
            with os.fdopen(descriptor, "a", encoding="utf-8") as log:
                log.write(line)


def read_evidence(path: Path) -> list[Evidence]:
    """Every record in an evidence log, decoded into its type as it is read (a record that
    is not one is an error here, never a dict guessed at later); a missing log means no
    request arrived."""
    if not path.exists():
        return []
    decoder = msgspec.json.Decoder(Evidence)
    with path.open(encoding="utf-8") as log:
        return [decoder.decode(line) for line in log if line.strip() and not line.startswith(_CALL_LINE)]


def read_calls(path: Path) -> list[Call]:
    """The log's other requests (:class:`Call`), in the order they came."""
    if not path.exists():
        return []
    decoder = msgspec.json.Decoder(dict[str, Call])
    with path.open(encoding="utf-8") as log:
        return [decoder.decode(line)[CALL_KEY] for line in log if line.startswith(_CALL_LINE)]
