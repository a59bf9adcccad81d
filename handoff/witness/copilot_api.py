"""The witness as the GitHub Copilot service: the lab's own path, where an app's
zero-argument ``CopilotClient()`` talks to the Copilot API with a GitHub token instead of
a BYOK provider.

The runtime sends its Copilot-service requests to ``COPILOT_API_URL`` and its GitHub API
requests to ``COPILOT_DEBUG_GITHUB_API_URL``; both point at the witness, which tells the
two APIs apart by path (BYOK's are under ``/v1/``). Measured, request by request
(runtime 1.0.102 and 1.0.92):

* ``GET /models``: an object with a ``data`` list; the runtime needs ``id``, the SDK's
  ``list_models()`` ``name`` too. A broken answer sends the chat to the real service, so
  this one never fails for a token the witness issued.
* ``POST /chat/completions``: the OpenAI chat wire, as JSON or (``"stream": true``) as
  Server-Sent Events; ``x-client-session-id`` names the session.
* ``POST /mcp/readonly`` (the built-in GitHub MCP server, twice a session start): answered
  at once with 404, which the runtime takes as "no such server"; one held open would
  block the first turn for a minute.
* ``/copilot_internal/…`` and ``/telemetry/…`` (the GitHub API): 404 at once, harmless.
* Runtime 1.0.78 (SDK 1.0.9's, the lab's own) also POSTs ``/models/session``
  (``{"auto_mode": {"model_hints": ["auto"]}}``) before ``GET /models``: answered 404 as
  any path the witness has no route for, which closes the connection (server.py), and
  the runtime goes on with the model it was given.

**Tokens name who sent a request.** The witness is given the tokens it is to accept
(``gho_`` and random hex, a prefix the runtime accepts), each with its holder: for the
lab, one token per principal; for a run, one per step, so that every request of a step
is attributed to it by the one thing the runtime always sends, its token, even the
requests it sends on its own (a compaction's carries none of an app's headers). A
request with any other token, or none, is answered 401 and recorded as refused. This
module only decides; the server (server.py) reads the requests and writes the answers.
"""

from __future__ import annotations

import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MODELS = ("claude-haiku-4.5", "gpt-5-mini")  # the lab's default model first, then its --model example
PRINCIPALS = ("alice", "bob")  # one token each: the second shows what another token may do
# A model's limits as the service lists them: without them the runtime cannot compact a
# session ("compact" fails), which the compaction rungs do.
LIMITS = {"max_context_window_tokens": 200_000, "max_prompt_tokens": 128_000, "max_output_tokens": 16_000}
TOKEN_PREFIX = "gho_"  # a GitHub OAuth token's prefix: the runtime ignores a token without a known one
CHAT = "/chat/completions"
MODELS_PATH = "/models"
GITHUB_MCP = "/mcp/readonly"
GITHUB_API = ("/copilot_internal/", "/telemetry/")


@dataclass(frozen=True)
class Holder:
    """Whom a token was issued to: a principal, and for a run's step the tags every
    request of that step is read with (witness/tags.py: its scenario, step, host, fact),
    as a BYOK provider's headers would carry them on every request."""
    principal: str
    tags: tuple[tuple[str, str], ...] = ()


def holders(text: str) -> dict[str, Holder] | None:
    """The tokens a witness is given when it starts (TOKENS_VARIABLE, JSON): token ->
    principal, or token -> ``{"principal": ..., "tags": {...}}`` for a step's token made
    ahead of the run (a cluster's, handoff/export/k8s.py). None for anything else."""
    try:
        given = json.loads(text)
    except ValueError:
        return None
    if not isinstance(given, dict):
        return None
    found = {}
    for token, holder in given.items():
        if isinstance(holder, dict) and holder.keys() <= {"principal", "tags"}:
            principal, tags = holder.get("principal"), holder.get("tags", {})
        else:
            principal, tags = holder, {}
        if not (isinstance(token, str) and token and isinstance(principal, str) and principal
                and isinstance(tags, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items())):
            return None
        found[token] = Holder(principal, tuple(sorted(tags.items())))
    return found


def given(holder: Holder) -> dict[str, Any]:
    """A holder as :func:`holders` reads it back."""
    return {"principal": holder.principal, "tags": dict(holder.tags)}


def new_token() -> str:
    return f"{TOKEN_PREFIX}{secrets.token_hex(18)}"


def issue(principals: tuple[str, ...] = PRINCIPALS) -> dict[str, str]:
    """A new token for each principal: token -> principal."""
    return {new_token(): principal for principal in principals}


def route(path: str) -> str | None:
    """Which of the service's requests a path is: "models", "chat", "mcp" or "github";
    None for one that is not the Copilot API's (BYOK's ``/v1/…``, anything else). A base
    URL with a path of its own keeps it for some requests and not others (measured), so
    the end of the path decides."""
    clean = urlsplit(path).path.rstrip("/")
    if clean.startswith("/v1/"):
        return None
    if clean.endswith(MODELS_PATH):
        return "models"
    if clean.endswith(CHAT):
        return "chat"
    if clean.endswith(GITHUB_MCP):
        return "mcp"
    return "github" if any(part in f"{clean}/" for part in GITHUB_API) else None


def holder(tokens: dict[str, Holder], authorization: str | None) -> Holder | None:
    """Whose token a request carries; None for no token or one not issued."""
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return None
    for token, found in tokens.items():
        if hmac.compare_digest(given.strip().encode(), token.encode()):
            return found
    return None


@dataclass(frozen=True)
class Answer:
    """What to answer a request that is not a chat: a status and a JSON body."""
    status: int
    body: dict[str, Any]


def models() -> dict[str, Any]:
    """The model list, in the shape both the runtime and the SDK read."""
    return {"object": "list", "data": [
        {"id": model, "name": model, "object": "model", "vendor": "handoff", "version": model,
         "capabilities": {"type": "chat", "family": model, "supports": {"streaming": True, "tool_calls": True},
                          "limits": LIMITS}}
        for model in MODELS]}


def answer(kind: str) -> Answer:
    """The answer to a request of an issued token that is not a chat."""
    if kind == "models":
        return Answer(200, models())
    if kind == "mcp":
        return Answer(404, {"message": "the witness has no GitHub MCP server"})
    return Answer(404, {"message": "Not Found: the witness answers no GitHub API call"})


REFUSED = Answer(401, {"message": "Bad credentials: not a token this witness issued"})
