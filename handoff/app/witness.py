"""`handoff witness`: the witness in the foreground for a user's own, unmodified app.

It issues a token per principal and prints what points an app at it on the lab's path
(a zero-argument ``CopilotClient()`` reads the runtime, the Copilot API, the GitHub API
and the token from the environment): ``export`` lines for the first principal, the
second principal's token on a commented line (for a second terminal), and the base URL
a BYOK app gives its provider; then ``Listening: URL``. When it stops (Ctrl-C), a few
lines of what it saw: the requests of each principal, and where each fact told was seen.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from handoff.runtime_locator import locate_runtime
from handoff.witness import copilot_api
from handoff.witness.__main__ import serve

RUNTIME_VARIABLE = "COPILOT_CLI_PATH"
API_VARIABLE = "COPILOT_API_URL"
GITHUB_API_VARIABLE = "COPILOT_DEBUG_GITHUB_API_URL"
TOKEN_VARIABLE = "COPILOT_GITHUB_TOKEN"


def serve_for_apps(host: str, port: int, evidence: Path | None) -> int:
    """Serve both APIs until Ctrl-C; the exit code (2: cannot listen there)."""
    runtime = locate_runtime()  # before anything is printed: a missing runtime is bad input
    tokens = copilot_api.issue()
    token_of = {principal: token for token, principal in tokens.items()}
    first, second = copilot_api.PRINCIPALS

    def introduce(url: str) -> list[str]:
        return [
            f"export {RUNTIME_VARIABLE}={shlex.quote(str(runtime))}",
            f"export {API_VARIABLE}={url}",
            f"export {GITHUB_API_VARIABLE}={url}",
            f"export {TOKEN_VARIABLE}={token_of[first]}  # {first}",
            f"# export {TOKEN_VARIABLE}={token_of[second]}  # {second}: another principal, e.g. in a second terminal",
            f"# a BYOK app: provider base_url {url}/v1 (type openai, wire_api completions)",
        ]

    return serve(host, port, evidence, tokens=tokens, introduce=introduce)
