"""Which session ids are safe to use as a file name, and the tool's own random ids.

The runtime keeps a session in ``<home>/session-state/<id>/``, and the tool reads and
copies that folder, so an id is a path component: an id from a scenario file, an
option, or a worker's report is checked here before it touches a path. (Whether an id
could carry a secret is another question: handoff/guard/ids.py.)
"""

from __future__ import annotations

import re
import uuid

SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
RULE = "1-100 letters, digits, '.', '_' or '-', starting with a letter or digit"


def safe_id(session_id: str | None) -> bool:
    return bool(session_id) and SAFE.fullmatch(session_id) is not None


def new_session_id(prefix: str = "handoff") -> str:
    """A random id in the lab's shape: a readable prefix and random hex, 24 characters.
    Its hex holds a letter: all digits (1 in ~2,000 draws) would read as a card or account
    number, and an id carries no secret, so nothing that shows ids may have to hide it."""
    while True:
        made = f"{prefix}-{uuid.uuid4().hex}"[:24]
        if any(letter in made[len(prefix) + 1:] for letter in "abcdef"):
            return made
