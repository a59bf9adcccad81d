"""Run the witness model standalone: ``python -m handoff.witness [--port N] [--evidence FILE]
[--require-api-key-env VAR] [--relay-to URL]``.

Prints ``Listening: http://HOST:PORT`` once it accepts connections; the coordinator
waits for exactly that line. ``--require-api-key-env VAR`` makes it behave like a hosted
OpenAI-compatible service that needs a key (the key itself is read from the environment,
never from the command line, so it does not show up in the process table).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Callable

from handoff.witness import copilot_api
from handoff.witness.server import make_server
from handoff.witness.tags import RUN_TOKEN_VARIABLE, TOKENS_VARIABLE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m handoff.witness", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--evidence", type=Path, help="append a JSON line per request here")
    parser.add_argument("--require-api-key-env", metavar="VAR",
                        help="answer 401 unless a request carries `Authorization: Bearer $VAR`")
    parser.add_argument("--relay-to", metavar="URL",
                        help="do not answer: record each request, then pass it on to this OpenAI-compatible endpoint")
    args = parser.parse_args(argv)
    # `handoff run` gives its witness the run's token in this variable (never on the command
    # line, which every local user can read); then only requests carrying it are heard.
    run_token = os.environ.pop(RUN_TOKEN_VARIABLE, None) or None
    tokens = copilot_api.holders(os.environ.pop(TOKENS_VARIABLE, "{}"))
    if tokens is None:
        print(f"error: {TOKENS_VARIABLE} is not a JSON object of tokens and their principals (a name, or an object "
              f"of a principal and tags)", file=sys.stderr)
        return 2
    api_key = None
    if args.require_api_key_env:
        api_key = os.environ.get(args.require_api_key_env)
        if not api_key:
            print(f"error: --require-api-key-env {args.require_api_key_env}: that variable is not set or empty", file=sys.stderr)
            return 2
    return serve(args.host, args.port, args.evidence, api_key, args.relay_to, run_token, tokens)


def _stop(*_) -> None:
    """SIGTERM ends the server as cleanly as Ctrl-C does."""
    raise KeyboardInterrupt


def serve(host: str, port: int, evidence: Path | None, api_key: str | None = None, upstream: str | None = None,
          run_token: str | None = None, tokens: dict[str, str | copilot_api.Holder] | None = None,
          introduce: Callable[[str], list[str]] | None = None) -> int:
    """Serve until Ctrl-C or SIGTERM. ``tokens``: the Copilot API's (token -> principal).
    ``introduce``: for a person, the lines to print before ``Listening:`` given the URL,
    and a summary of what was seen when it stops."""
    try:
        server = make_server(host, port, evidence, api_key, upstream, run_token, tokens)
    except OSError as error:
        print(f"error: cannot listen on {host}:{port}: {error.strerror}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop)
    bound_host, bound_port = server.server_address[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"http://{shown}:{bound_port}"
    for line in introduce(url) if introduce else []:
        print(line)
    print(f"Listening: {url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    if introduce:
        print("\n".join(server.tally.lines()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
