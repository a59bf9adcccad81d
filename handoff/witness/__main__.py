"""Run the witness model standalone: ``python -m handoff.witness [--port N] [--evidence FILE]``.

Prints ``Listening: http://HOST:PORT`` once it accepts connections; the coordinator
waits for exactly that line.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from handoff.witness.server import make_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m handoff.witness", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--evidence", type=Path, help="append a JSON line per request here")
    args = parser.parse_args(argv)
    return serve(args.host, args.port, args.evidence)


def _stop(*_) -> None:
    """SIGTERM ends the server as cleanly as Ctrl-C does."""
    raise KeyboardInterrupt


def serve(host: str, port: int, evidence: Path | None) -> int:
    try:
        server = make_server(host, port, evidence)
    except OSError as error:
        print(f"error: cannot listen on {host}:{port}: {error.strerror}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop)
    bound_host, bound_port = server.server_address[:2]
    print(f"Listening: http://{bound_host}:{bound_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
