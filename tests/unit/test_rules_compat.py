"""Rules of the guard's version checks (handoff/guard/compat.py) that other tests leave open:

* a session whose last writer's version is not three numbers is not judged (as one with
  no recorded writer is not), whatever the resumer;
* the registry's creating runtime and the log's ``session.start`` are compared as
  written: versions that differ only in case disagree;
* a session the registry recorded no creator for is not judged, whatever its log says.
"""

import pytest

from handoff.guard.compat import downgrade_problem, origin_problem


@pytest.mark.parametrize("last_writer", ["1.0.102-rc.1", "1.0.102.0", "v1.0.102", "unknown"])
def test_a_last_writer_whose_version_is_not_three_numbers_is_not_judged(last_writer):
    assert downgrade_problem(last_writer, "1.0.92") is None
    assert downgrade_problem("1.0.102", "1.0.92") is not None  # a well-formed pair is judged


def test_the_registered_creator_and_the_log_s_are_compared_as_written():
    problem = origin_problem("1.0.102-RC.1", "1.0.102-rc.1")
    assert problem is not None and "registry says runtime 1.0.102-RC.1" in problem and "says 1.0.102-rc.1" in problem


@pytest.mark.parametrize("recorded", [None, ""])
def test_a_session_with_no_recorded_creator_is_not_judged_whatever_its_log_says(recorded):
    assert origin_problem(recorded, "1.0.102") is None
