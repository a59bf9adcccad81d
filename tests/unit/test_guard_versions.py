"""The guard's version rule: a session moves to the same or a newer runtime, never back,
unless the pair is declared known-good; and the log's creator is the registered one."""

import json

import pytest

from handoff.guard.compat import downgrade_problem, origin_problem
from handoff.guard.gate import Gate, Refused
from handoff.guard.ids import Minter
from handoff.stores.database import connect
from handoff.stores.registry import Registry


def test_same_and_newer_runtimes_may_resume():
    assert downgrade_problem("1.0.92", "1.0.92") is None
    assert downgrade_problem("1.0.92", "1.0.102") is None


def test_an_older_runtime_is_refused_with_both_versions_named():
    problem = downgrade_problem("1.0.102", "1.0.92")
    assert "runtime 1.0.92" in problem and "last written by runtime 1.0.102" in problem


def test_a_known_good_pair_is_let_through_and_only_that_pair():
    assert downgrade_problem("1.0.102", "1.0.92", (("1.0.102", "1.0.92"),)) is None
    assert downgrade_problem("1.0.102", "1.0.40", (("1.0.102", "1.0.92"),)) is not None


def test_no_recorded_writer_is_not_judged():
    assert downgrade_problem(None, "1.0.40") is None


def test_the_log_must_come_from_the_registered_creator():
    assert origin_problem("1.0.92", "1.0.92") is None
    assert origin_problem("1.0.92", None) is None  # no turn written yet: nothing to compare
    assert "registry says runtime 1.0.92" in origin_problem("1.0.92", "1.0.102")


KEY = b"app key " * 4


def log(created_by):
    return json.dumps({"id": "0", "type": "session.start", "data": {"copilotVersion": created_by}}).encode() + b"\n"


@pytest.fixture
def registry(tmp_path):
    return Registry(connect(f"sqlite:///{tmp_path / 'r.db'}"))


@pytest.fixture
def alice(registry):
    """A session id minted for alice, and a gate for her of a given holder."""
    minter = Minter(KEY, "alice")
    return minter.new(), lambda holder, known_good=(): Gate(registry, minter, holder, False, known_good)


def test_the_gate_refuses_a_downgrade_after_the_last_writer_not_the_creator(registry, alice):
    session, gate = alice
    registry.created(session, "alice", "a", "1.0.92", "1.0.25")
    registry.resumed(session, "b", "1.0.102", "1.0.24")
    with pytest.raises(Refused, match=r"runtime 1.0.92 may not resume a session last written by runtime 1.0.102"):
        gate("worker-c").admit_resume(session, log("1.0.92"), "1.0.92")
    gate("worker-d").admit_resume(session, log("1.0.92"), "1.0.102")  # no downgrade: admitted


def test_the_gate_lets_a_declared_pair_through(registry, alice):
    session, gate = alice
    registry.created(session, "alice", "a", "1.0.102", "1.0.25")
    gate("w", known_good=(("1.0.102", "1.0.92"),)).admit_resume(session, log("1.0.102"), "1.0.92")


def test_the_gate_refuses_a_log_from_another_creator(registry, alice):
    session, gate = alice
    registry.created(session, "alice", "a", "1.0.102", "1.0.25")
    with pytest.raises(Refused, match=r"registry says runtime 1.0.102 .* session.start says 1.0.92"):
        gate("w").admit_resume(session, log("1.0.92"), "1.0.102")


def test_the_registry_keeps_creator_and_last_writer_with_their_sdks(registry):
    registry.created("s", "alice", "a", "1.0.92", "1.0.24")
    registry.resumed("s", "b", "1.0.102", "1.0.27")
    [entry] = registry.sessions()
    assert (entry.created_runtime, entry.created_sdk, entry.runtime_version, entry.sdk_version) == \
        ("1.0.92", "1.0.24", "1.0.102", "1.0.27")
    assert registry.versions_of("s") == ("1.0.92", "1.0.102")


def test_a_resume_that_does_not_say_its_runtime_is_checked_for_its_origin_only(registry, alice):
    session, gate = alice
    registry.created(session, "alice", "a", "1.0.102", "1.0.25")
    gate("w").admit_resume(session, log("1.0.102"))  # no version to compare: no downgrade to refuse
