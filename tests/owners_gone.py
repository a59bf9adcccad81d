"""A run's owner, played by a real process: it writes its ledger (handoff/owners.py), waits
while the test makes what the ledger names, and ends when told, as a killed run ends
with its things still there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent

OWNER = """
import json, sys
from handoff import owners
owners.claim()
for kind, name in json.loads(sys.argv[1]):
    owners.note(kind, name)
print(owners.tag(), flush=True)
sys.stdin.read()
"""


class Owner:
    """``with Owner((kind, name), ...) as owner:`` make the things, then ``owner.end()``."""

    def __init__(self, *things: tuple[str, str]):
        self.process = subprocess.Popen([sys.executable, "-c", OWNER, json.dumps(things)], cwd=PROJECT,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.tag = self.process.stdout.readline().strip()  # its ledger is written
        self.pid = self.process.pid

    def end(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)

    def __enter__(self) -> "Owner":
        return self

    def __exit__(self, *_: object) -> None:
        self.process.kill()
        self.process.wait()
