"""Pod hosts: each step played from its exported Kubernetes objects by `podman kube play`
(hosts/played.py), in the default matrix. Their verdicts are checked with every other
scenario's (test_ladder.py); here, that each step ran in a pod of its own as exported, and
that nothing of them is left in the engine."""

from __future__ import annotations

import os

import pytest

from handoff import leftovers
from handoff.hosts.pod import HOME
from handoff.words import Verdict

pytestmark = pytest.mark.e2e
ENGINE_KINDS = ("pod", "container", "volume", "network")


def test_each_step_ran_in_a_pod_of_its_own_from_its_mounted_spec(matrix):
    a, b = matrix.ran("cross-pod-claim").values()
    assert (a.ready.hostname, b.ready.hostname) == ("pod-a-1", "pod-b-1")
    assert (a.ready.pid, b.ready.pid) != (None, None) and a.ready.address != b.ready.address
    assert not a.ready.address.startswith("10.213.")  # on podman's bridge, not in a namespace of the LAN
    assert a.ready.home == b.ready.home == HOME
    assert b.eventlog.closed_before_resume is True
    [turn] = matrix.asked("cross-pod-claim")
    assert turn.verdict == Verdict.KEPT


def test_pods_reach_postgresql_at_the_lan_s_gateway(matrix):
    a, b = matrix.ran("cross-pod-postgres").values()
    assert a.ready.store and a.ready.store == b.ready.store
    assert "127.0.0.1" not in a.ready.store
    [turn] = matrix.asked("cross-pod-postgres")
    assert turn.verdict == Verdict.KEPT


def test_the_pods_reached_the_witness_by_its_service_s_name(matrix):
    """Each step's requests reached the run's witness, tagged with the step: the worker is
    told the witness by its Service's name, which only the pod's host alias resolves."""
    matrix.ran("cross-pod-claim")
    record = matrix.scenario("cross-pod-claim")
    steps = {call.step for call in record.calls}
    assert steps == {"A", "B"}


def test_nothing_of_the_pods_is_left_in_the_engine(matrix):
    matrix.ran("cross-pod-claim")
    assert [left for left in leftovers.find(of=os.getpid()) if left.kind in ENGINE_KINDS] == []
