"""What the runtime is given as its model, built inside the process that starts it.

The backend arrives as plain data (:class:`handoff.protocol.Backend`, variable names, no
secrets); only here, where the runtime starts, are the secrets read from the
environment. A BYOK provider is built fresh for every runtime because a session does not
store it: a resume must be given it again.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Mapping

from handoff.errors import UserError
from handoff.protocol import COPILOT, OPENAI_COMPATIBLE, WITNESS_COPILOT_API, Backend
from handoff.witness.copilot_api import MODELS
from handoff.worker.sdk import CopilotService, Provider

NO_KEY = "no-key-configured"  # an endpoint such as Ollama ignores the key; the runtime needs one


def model_source(backend: Backend, witness_url: str | None = None, headers: dict[str, str] | None = None,
                 environ: Mapping[str, str] | None = None, token: str | None = None,
                 without_provider: bool = False) -> Provider | CopilotService | None:
    """A BYOK ``Provider`` or the ``CopilotService``. ``witness_url`` is the witness, or for
    an OpenAI-compatible backend the relay in front of the endpoint (`handoff run`);
    without it the endpoint is used directly (`handoff lab`). ``token``: on the witness's
    Copilot API, the token it issued to this runtime's principal or step.
    ``without_provider``: what an app that passes no model settings on resume has. On
    BYOK, nothing (None): no endpoint, no key. On the Copilot API the client's token and
    the service stay, as they are the client's, not the session's: only the model is
    left out (the session keeps its own, as the lab's ``resume_session(id)`` shows)."""
    environ = os.environ if environ is None else environ
    if backend.kind in (WITNESS_COPILOT_API, COPILOT):
        service = _copilot_service(backend, witness_url, headers, environ, token)
        return replace(service, model="") if without_provider else service
    if without_provider:
        return None
    if backend.kind == OPENAI_COMPATIBLE:
        key = environ.get(backend.api_key_env) if backend.api_key_env else NO_KEY
        if not key:
            raise UserError(f"--api-key-env {backend.api_key_env}: that variable is not set or empty")
        base_url = f"{witness_url}/v1" if witness_url else backend.provider_url
        return Provider(base_url, backend.model, dict(headers or {}), api_key=key)
    if not witness_url:
        raise ValueError("the witness backend needs the witness's URL")
    return Provider(f"{witness_url}/v1", backend.model, dict(headers or {}))


def _copilot_service(backend: Backend, witness_url: str | None, headers: dict[str, str] | None,
                     environ: Mapping[str, str], token: str | None) -> CopilotService:
    if backend.kind == WITNESS_COPILOT_API:
        if not witness_url or not token:
            raise ValueError("the witness's Copilot API needs its URL and a token it issued")
        return CopilotService(backend.model, token, api_url=witness_url, headers=dict(headers or {}))
    token = environ.get(backend.token_env or "")
    if not token:
        raise UserError(f"${backend.token_env} is no longer set: set it to a GitHub token that may use Copilot")
    return CopilotService(backend.model, token)


def second_model(backend: Backend, model: str) -> str:
    """Another model than ``model``, for a step that changes it on resume: on the witness's
    Copilot API another it lists (the service refuses, or ignores, one it does not list);
    elsewhere a name of its own, which a BYOK provider answers to."""
    if backend.kind == WITNESS_COPILOT_API:
        return next(name for name in MODELS if name != model)
    return f"{model}-second"
