"""The long-history rung (scenarios/long-history-200-turns.toml, tagged slow, so not in the
default matrix): a session of 200 turns, the fact in turn 1 only, resumed in a new process,
judged on the answer, the wire and the log; run once here on its own (about 20 s)."""

from __future__ import annotations

import pytest

from handoff import scenario_files
from handoff.witness.tags import COMPACTION, is_filler_turn
from handoff.words import ReplyKind, Verdict
from tests.e2e.conftest import OTHER_FACT, run_scenarios

pytestmark = pytest.mark.e2e
NAME = "long-history-200-turns"


@pytest.fixture(scope="module")
def outcome():
    return run_scenarios(scenario_files.select([NAME]), OTHER_FACT)


def test_turn_1_of_200_is_sent_after_a_resume_in_a_new_process(outcome):
    (asked,) = outcome.asked(NAME)
    assert asked.verdict == Verdict.KEPT and asked.as_expected
    seen = outcome.scenario(NAME).evidence
    (question,) = [e for e in seen if e.step == "B"]
    # the whole history went with the question: 200 user turns, 200 answers and the question
    assert question.messages_received == 401 and question.fact_in == ("user",)
    assert question.reply_kind == ReplyKind.RECALLED


def test_every_filler_turn_still_carried_the_fact_and_nothing_was_compacted(outcome):
    seen = outcome.scenario(NAME).evidence
    filler = [e for e in seen if is_filler_turn(e.turn)]
    assert len(filler) == 199 and all(e.fact_sent and e.fact_in == ("user",) for e in filler)
    assert all(e.reply_kind == ReplyKind.ACKNOWLEDGED for e in filler)
    assert not any(e.interaction == COMPACTION for e in seen)  # the fact never rested on a summary


def test_the_resume_loaded_every_event_of_the_200_turns(outcome):
    log = outcome.steps(NAME)["B"].eventlog
    assert log.closed_before_resume and log.messages_before_resume == 200
    assert log.resume_event_count == log.events_before_resume > 1000
