"""The rules of handoff/checker/verdicts.py's step facts, each pinned on its own:

* versions are compared as written: a runtime or SDK that differs from the one asked
  for only in case is another version, and the step says it was substituted;
* whether a resume loaded all the log's events is not told when either count is missing.
"""

from __future__ import annotations

from dataclasses import replace

import msgspec
import pytest

from handoff.protocol import EventLog
from tests.unit.test_checker_paths import READY, facts


@pytest.mark.parametrize("ran, asked, says", [
    ({"runtime_version": "1.0.102-beta"}, {"asked_runtime": "1.0.102-Beta"},
     "asked for runtime 1.0.102-Beta, ran 1.0.102-beta"),
    ({"sdk_version": "node@1.0.14"}, {"asked_sdk": "Node@1.0.14"}, "asked for SDK Node@1.0.14, ran node@1.0.14"),
], ids=["runtime", "sdk"])
def test_a_version_differing_from_the_one_asked_for_only_in_case_is_substituted(ran, asked, says):
    step = replace(facts("B", ready=msgspec.structs.replace(READY, **ran)), **asked)
    assert step.substituted == says
    same = {key: value.casefold() for key, value in asked.items()}  # as asked, letter for letter
    assert replace(facts("B", ready=msgspec.structs.replace(READY, **ran)), **same).substituted is None


def _log(resume_event_count, events_before_resume) -> EventLog:
    return EventLog(t=0.0, session_id="sid", found=True, events=8, starts=1, resumes=1,
                    resume_event_count=resume_event_count, events_before_resume=events_before_resume)


@pytest.mark.parametrize("loaded, before, told", [(None, 7, None), (7, None, None), (None, None, None),
                                                   (7, 7, True), (6, 7, False)])
def test_whether_a_resume_loaded_all_events_is_not_told_when_either_count_is_missing(loaded, before, told):
    assert facts("B", eventlog=_log(loaded, before)).loaded_all_events is told
