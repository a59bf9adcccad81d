"""What a simulated host sees of this machine's files: its own empty /tmp and /run, the
project and Python's prefix wherever they are."""

from __future__ import annotations

import sys
from pathlib import Path

from handoff.hosts.namespace import unseen
from handoff.runtime_locator import PROJECT_ROOT


def test_what_a_simulated_host_cannot_see():
    assert unseen(Path("/tmp/x/copilot")) == "/tmp" and unseen(Path("/run/user/0/copilot")) == "/run"
    assert unseen(Path("/opt/copilot/copilot")) is None and unseen(Path("/tmpfoo/copilot")) is None
    assert unseen(PROJECT_ROOT / "runtime" / "copilot") is None  # in view even in a project cloned into /tmp
    assert unseen(Path(sys.base_prefix) / "bin" / "x") is None
