"""``python -m handoff.lab.child``: the lab's process for `handoff lab --sdk VERSION`, run
by another SDK's interpreter (handoff/lab/other_sdk.py).

It reads one JSON line on its stdin (other_sdk.Request), runs the lab as `handoff lab`
would, its transcript on stdout and its notes on stderr, and writes its run's record and
how it ended to the files it was given. Whatever the lab raises is an outcome, never a
traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from handoff.errors import UserError
from handoff.lab.calls import created_by
from handoff.lab.options import LabFailure
from handoff.lab.other_sdk import Outcome, Request, decode_options
from handoff.lab.runner import run_lab
from handoff.runs import store as runs
from handoff.runs.record import encode
from handoff.words import Command


def main() -> int:
    request = msgspec.json.decode(sys.stdin.readline(), type=Request)
    options = decode_options(request.options)
    runs_dir = Path(request.runs_dir)

    def say(line: str) -> None:
        print(line, flush=True)

    def note(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        outcome = Outcome(run_lab(options, say, note, keep=lambda record: Path(request.record).write_bytes(encode(record)),
                                  creator=lambda session_id: created_by(session_id, runs.records(runs_dir,
                                                                                                 command=Command.LAB))))
    except UserError as error:
        outcome = Outcome(2, str(error))
    except LabFailure as error:
        outcome = Outcome(3, str(error))
    except KeyboardInterrupt:
        outcome = Outcome(130)
    Path(request.outcome).write_bytes(msgspec.json.encode(outcome))
    return outcome.code


if __name__ == "__main__":
    sys.exit(main())
