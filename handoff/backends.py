"""Where the model behind a session comes from: the embedded witness, the GitHub Copilot
service, or any OpenAI-compatible endpoint (Ollama, vLLM, a hosted API).

The choice itself is plain data (:class:`handoff.protocol.Backend`: a kind, a model and
the *names* of the variables that hold secrets), so it can be printed, stored with a run
and sent to a worker on another host. This module is the coordinator's side of it: it
(1) checks the options before any process starts, so bad input is one line and exit 2,
not a runtime failure half-way; (2) asks an endpoint once whether it answers
(:func:`preflight`); and (3) turns the runtime's backend failures (a refused key, an
endpoint that is not there) into a sentence that names the option to fix
(:func:`explain`), since only it knows which option supplied the URL or the key. What
the SDK is given is built inside the worker (handoff/worker/model.py).
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from handoff.errors import UserError
from handoff.inputs import network_url, one_line, utf8
from handoff.protocol import COPILOT, OPENAI_COMPATIBLE, WITNESS, WITNESS_COPILOT_API, WITNESS_MODEL, Backend

# What --backend takes. `witness` is the witness as the GitHub Copilot API (the lab's path,
# every command's default); `witness-byok` is the witness as a BYOK provider. Stored, each
# is the kind of what ran (protocol.py), so a run stored before the default moved still
# says BYOK.
WITNESS_BYOK = "witness-byok"
KINDS = (WITNESS, WITNESS_BYOK, COPILOT, OPENAI_COMPATIBLE)
DEFAULT_COPILOT_MODEL = "claude-haiku-4.5"
# The variables the Copilot runtime itself reads, in its order of precedence.
TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")

TOKEN_HINT = (
    "set COPILOT_GITHUB_TOKEN (or GH_TOKEN / GITHUB_TOKEN) to a GitHub token that may use "
    "Copilot, e.g. a fine-grained token with the 'Copilot Requests' permission, or "
    "`export COPILOT_GITHUB_TOKEN=$(gh auth token)` after `gh auth login`"
)


def explain(backend: Backend, message: str) -> str | None:
    """A one-line, actionable reading of a runtime error about this backend, or None
    when the error is not about the backend (a missing session, say)."""
    status = re.search(r"\(HTTP (\d{3})\)", message)
    unreachable = ("Could not connect", "ECONNREFUSED", "relay could not reach", "network fetch failed",
                   "error sending request")
    # Checked first: the runtime words a token check that never reached GitHub as
    # "Authentication failed: ... network fetch failed", which is no refusal.
    if any(sign in message for sign in unreachable):
        if backend.kind == OPENAI_COMPATIBLE:
            return f"cannot reach the endpoint {backend.provider_url}: is it running, and is --provider-url right?"
        if backend.kind == COPILOT:
            return "cannot reach the GitHub Copilot service: this machine needs internet access for --backend copilot"
        return None
    refused = "Authentication failed" in message or (status and status.group(1) in ("401", "403"))
    if refused:
        code = f" (HTTP {status.group(1)})" if status else ""
        if backend.kind == COPILOT:
            return f"the GitHub Copilot service refused the token from ${backend.token_env}{code}: {TOKEN_HINT}"
        if backend.kind == OPENAI_COMPATIBLE:
            if backend.api_key_env:
                return (f"the endpoint {backend.provider_url} refused the API key from ${backend.api_key_env}{code}: "
                        f"check that variable's value (it is not shown)")
            return (f"the endpoint {backend.provider_url} wants an API key{code}: "
                    f"pass --api-key-env VAR, VAR being the variable that holds it")
        return f"the witness model refused the request{code}"
    return None


def choose(kind: str, model: str | None, provider_url: str | None, api_key_env: str | None,
           environ: Mapping[str, str] | None = None, api_model: str = "") -> Backend:
    """Validate the backend options; every problem is a UserError naming the option.
    ``api_model``: the model on the witness's Copilot API when none is given (empty: the
    lab's, the one ``list_models`` offers)."""
    environ = os.environ if environ is None else environ
    if kind not in KINDS:
        raise UserError(f"--backend {kind}: choose one of {', '.join(KINDS)}")
    if model is not None and not model.strip():
        raise UserError("--model must not be empty")
    if model is not None and not one_line(model):
        raise UserError("--model: must be one line of text, without line breaks or control characters")
    if kind != OPENAI_COMPATIBLE:
        for option, value in (("--provider-url", provider_url), ("--api-key-env", api_key_env)):
            if value:
                raise UserError(f"{option} is for --backend {OPENAI_COMPATIBLE} (the backend is {kind})")
    if kind == WITNESS:
        return Backend(WITNESS_COPILOT_API, model or api_model)
    if kind == WITNESS_BYOK:
        return Backend(WITNESS, model or WITNESS_MODEL)
    if kind == COPILOT:
        token_env = next((name for name in TOKEN_VARIABLES if environ.get(name, "").strip()), None)
        if token_env is None:
            raise UserError(f"--backend copilot needs a GitHub token: {TOKEN_HINT}")
        if not _header_safe(environ[token_env]):  # not echoed: it is the token
            raise UserError(f"${token_env}: the token in it holds a space, a line break, a control character or "
                            f"bytes that are not UTF-8, which no HTTP header can carry; set it to the token alone")
        return Backend(COPILOT, model or DEFAULT_COPILOT_MODEL, token_env=token_env)
    if not provider_url:
        raise UserError(f"--backend {OPENAI_COMPATIBLE} needs --provider-url, e.g. http://localhost:11434/v1 for Ollama")
    network_url(provider_url, "--provider-url", ("http", "https"), "http://localhost:11434/v1")
    if not model:
        raise UserError(f"--backend {OPENAI_COMPATIBLE} needs --model NAME, the endpoint's model (e.g. llama3.2 for Ollama)")
    if api_key_env is not None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", api_key_env):
            # Not echoed: a user who passed the key itself would see it printed.
            raise UserError("--api-key-env takes the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key")
        if not environ.get(api_key_env):
            raise UserError(f"--api-key-env {api_key_env}: that variable is not set or empty")
        if not _header_safe(environ[api_key_env]):
            # Not echoed either: it is the key.
            raise UserError(f"--api-key-env {api_key_env}: the key in it holds a space, a line break or a control "
                            f"character, which no HTTP header can carry; set it to the key alone")
    return Backend(OPENAI_COMPATIBLE, model, provider_url=provider_url.rstrip("/"), api_key_env=api_key_env)


def _header_safe(secret: str) -> bool:
    """A key or token an HTTP header can carry: one line of UTF-8 with no space inside
    (spaces around it are dropped, as the header is built)."""
    return utf8(secret) and one_line(secret) and not any(character.isspace() for character in secret.strip())


def preflight(backend: Backend, environ: Mapping[str, str] | None = None, timeout: float = 5.0) -> None:
    """Before a run, ask an OpenAI-compatible endpoint for its models once, with the key.
    An endpoint that does not answer, or refuses the key, is then one line and exit 2
    instead of a failure in every step after the runtime's retries. Any other answer,
    even a 404 from an endpoint without /models, lets the run go ahead."""
    if backend.kind != OPENAI_COMPATIBLE:
        return
    import urllib.error
    import urllib.request

    environ = os.environ if environ is None else environ
    request = urllib.request.Request(f"{backend.provider_url}/models")
    if backend.api_key_env:
        request.add_header("Authorization", f"Bearer {environ.get(backend.api_key_env, '')}")
    try:
        urllib.request.urlopen(request, timeout=timeout).close()
    except urllib.error.HTTPError as error:
        explained = explain(backend, f"(HTTP {error.code})")
        if explained:
            raise UserError(explained) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise UserError(f"--provider-url {backend.provider_url}: cannot reach it ({reason}); is the endpoint running?") from None


def configured(environ: Mapping[str, str] | None = None) -> list[tuple[str, bool | None, str, str | None]]:
    """For `handoff doctor`: each backend, whether it is usable as things stand (None:
    depends on options given per run), what to say, and how to make it usable. Names the
    token's variable, never its value."""
    environ = os.environ if environ is None else environ
    token_env = next((name for name in TOKEN_VARIABLES if environ.get(name, "").strip()), None)
    return [
        (WITNESS, True, "ready (embedded, the default): the Copilot API, the lab's path", None),
        (WITNESS_BYOK, True, "ready (embedded): as a BYOK provider", None),
        (COPILOT, token_env is not None,
         f"token present in ${token_env} (not checked: that needs the service)" if token_env
         else "no token in COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN", None if token_env else TOKEN_HINT),
        (OPENAI_COMPATIBLE, None, "per run: --provider-url URL --model NAME [--api-key-env VAR] (e.g. Ollama)", None),
    ]
