"""What a simulated host sees of this machine: its own empty /tmp and /run, the project
and Python's prefix wherever they are, and its own loopback address (a store named by
localhost is not this machine's there)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from handoff.hosts.namespace import unseen
from handoff.runtime_locator import PROJECT_ROOT


def test_what_a_simulated_host_cannot_see():
    assert unseen(Path("/tmp/x/copilot")) == "/tmp" and unseen(Path("/run/user/0/copilot")) == "/run"
    assert unseen(Path("/opt/copilot/copilot")) is None and unseen(Path("/tmpfoo/copilot")) is None
    assert unseen(PROJECT_ROOT / "runtime" / "copilot") is None  # in view even in a project cloned into /tmp
    assert unseen(Path(sys.base_prefix) / "bin" / "x") is None


@pytest.mark.parametrize("url, refused", [
    ("postgresql://me@localhost:5432/db", True),
    ("postgresql://me@127.0.0.1:5432/db", True),
    ("postgresql://me@[::1]:5432/db", True),
    ("postgresql:///db?host=/var/run/postgresql", True),  # libpq's local socket
    ("postgresql://me@192.0.2.10:5432/db", False),
    ("postgresql://me@db.example.internal:5432/db", False),
])
def test_a_store_named_by_this_machine_s_own_address_is_refused_when_other_hosts_use_it(url, refused):
    from handoff.coordinator.runner import store_seen_by_the_hosts
    from handoff.errors import UserError
    from handoff.scenario_files import select

    elsewhere, here = select(["cross-machine-postgres"]), select(["cross-process-postgres"])
    store_seen_by_the_hosts(url, here)  # every step on this machine: its own address is right
    store_seen_by_the_hosts(None, elsewhere)  # the run's own server: every host reaches it
    if refused:
        with pytest.raises(UserError, match="leave --store out") as raised:
            store_seen_by_the_hosts(url, elsewhere)
        assert "namespace" in str(raised.value) and "me:" not in str(raised.value)
    else:
        store_seen_by_the_hosts(url, elsewhere)
