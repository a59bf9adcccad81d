"""The new process of the conformance suite's new-process rows: import the provider by its
``MODULE:FACTORY``, resume the session through it with a home of its own, ask, and print
``{"answer": ..., "problem": ...}`` as one JSON line; or (``--files``) read the session's
files through it and print ``{"files": {path: sha256}, "problem": ...}``.

    python -m handoff.conform.resume MODULE:FACTORY SESSION_ID WITNESS_URL FACT TOPIC HOME
    python -m handoff.conform.resume MODULE:FACTORY SESSION_ID --files '["/state/events.jsonl", ...]'
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from handoff.conform.loading import factory_named
from handoff.conform.persistence import ask, quiet_sdk_logs, session_files
from handoff.fact import Fact


def main(argv: list[str]) -> int:
    if argv[2:3] == ["--files"]:
        spec, session_id, _, paths = argv
        try:
            said = {"files": asyncio.run(session_files(factory_named(spec), session_id, json.loads(paths))),
                    "problem": None}
        except LookupError as unreadable:
            said = {"files": None, "problem": f"a new process could not read them through the provider: {unreadable}"}
        print(json.dumps(said), flush=True)
        return 0
    spec, session_id, witness_url, value, topic, home = argv
    with quiet_sdk_logs():
        answer, problem = asyncio.run(ask(factory_named(spec), session_id, witness_url, "new-process",
                                          Fact(value, topic), Path(home)))
    print(json.dumps({"answer": answer, "problem": problem}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
