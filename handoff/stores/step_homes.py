"""The home a step's runtime keeps its sessions in (its COPILOT_HOME), on this machine.

* ``shared`` — one directory for every step of the scenario: what one disk, or an NFS
  mount on two machines, gives;
* ``own`` — a new, empty directory for the step: a machine with nothing shared;
* ``copied`` — a new directory into which the session's ``session-state/<id>/`` is
  copied from the previous step's home, as `rsync` of that folder would do. Only the
  session's folder travels, not the home's discovery index (``session-store.db``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from handoff.confined import inside
from handoff.eventlog import session_state
from handoff.words import HomeKind


def prepare_home(workdir: Path, step: str, kind: str, previous: Path | None, session_id: str) -> Path:
    home = inside(workdir, "home-shared" if kind == HomeKind.SHARED else f"home-{step}")
    home.mkdir(exist_ok=True)
    if kind == HomeKind.COPIED and previous is not None and session_state(previous, session_id).is_dir():
        shutil.copytree(session_state(previous, session_id), session_state(home, session_id))
    return home
