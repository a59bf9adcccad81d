"""A verdict that rested on a time-out, at its edges: when the log's answer is named a race
and in what words, to what precision its time is given, whose answer the log holds when
a later turn answered, when the log has no reply time; and a lease renewed on the gate's
own clock."""

from __future__ import annotations

import asyncio

import msgspec

from handoff.checker.checks import judge_scenario
from handoff.checker.verdicts import TurnJudgement
from handoff.eventlog import summarize
from handoff.guard import gate as gates
from handoff.guard.gate import Gate
from handoff.guard.ids import Minter
from handoff.protocol import ActionFailed, Backend
from handoff.runs.record import ScenarioRecord
from handoff.scenario import Scenario, Step
from handoff.stores.database import connect
from handoff.stores.registry import Registry
from handoff.words import Verdict
from tests.unit.test_checker_failed_turns import answered_log
from tests.unit.test_checker_paths import COPILOT, FACT, FINISHED, READY, RECALLED, seen, step, turn
from tests.unit.test_eventlog import stamped
from tests.unit.test_guard_gate import KEY, LOG, created

TIMEOUT = "Timeout after 20s waiting for session.idle"


def timed_out(number: int = 1) -> ActionFailed:
    return ActionFailed(t=0.0, action="ask", message=TIMEOUT, turn=number, ms=20_000, timeout_s=20.0)


def undelivered_after(reply_ms: int) -> str | None:
    """The `timed` text of an undelivered ask whose answer the log has ``reply_ms`` after its prompt."""
    log = msgspec.structs.replace(answered_log(RECALLED), last_reply_ms=reply_ms)
    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)), [step("B", READY, timed_out(), log, FINISHED)],
                            [seen("B", 1, True)])
    [asked] = judge_scenario(record, FACT).turns
    assert asked.verdict == Verdict.UNDELIVERED
    return asked.timed


def test_an_answer_later_than_half_the_time_out_is_named_a_race_in_full():
    assert undelivered_after(12_000) == (
        "no answer within 20 s; the session's log has the answer at +12.0 s — a race: the answer reached the log "
        "less than 50% of the time-out before the app gave up, so a slower machine could have judged this otherwise")


def test_an_answer_at_exactly_half_the_time_out_is_not_a_race():
    assert undelivered_after(10_000) == "no answer within 20 s; the session's log has the answer at +10.0 s"


def test_the_answers_time_is_given_in_tenths_of_a_second_from_milliseconds():
    assert undelivered_after(10_050).startswith("no answer within 20 s; the session's log has the answer at +10.1 s")
    assert undelivered_after(1_949) == "no answer within 20 s; the session's log has the answer at +1.9 s"


def test_a_failed_ask_before_an_answered_one_does_not_claim_the_logs_answer_time():
    """The log's last answer is turn 2's: turn 1's time-out is all turn 1 rested on."""
    log = msgspec.structs.replace(answered_log(RECALLED), last_reply_ms=1_300)
    spec = Step("B", ("resume", "ask", "ask", "close"), expect=("failed-loudly", "kept"))
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)),
                            [step("B", READY, timed_out(1), turn(2, "ask", RECALLED), log, FINISHED)],
                            [seen("B", 1, True), seen("B", 2, True)])
    first, second = judge_scenario(record, FACT).turns
    assert (first.verdict, first.timed) == (Verdict.FAILED_LOUDLY, "no answer within 20 s")
    assert (second.verdict, second.timed) == (Verdict.KEPT, None)


def test_a_reply_with_no_timed_prompt_before_it_has_no_reply_time():
    before_any_prompt = [stamped("assistant.message", "1", "2026-12-05T01:10:40.632Z", content="hello")]
    assert summarize(before_any_prompt).last_reply_ms is None
    untimed_prompt = [{"id": "1", "type": "user.message", "data": {"content": "q"}},
                      stamped("assistant.message", "2", "2026-12-05T01:10:40.632Z", content="a")]
    assert (summarize(untimed_prompt).last_reply, summarize(untimed_prompt).last_reply_ms) == ("a", None)


def test_a_lease_is_renewed_on_the_gates_own_clock_not_the_wall_clock(tmp_path, monkeypatch):
    """On the coordinator's lease clock a renewal must end LEASE_SECONDS after that clock's
    now: renewed on the wall clock it would outlive every time the lease clock will reach,
    and a later step told the lease ran out would find it still held."""
    monkeypatch.setattr(gates, "LEASE_SECONDS", 0.05)
    database = connect(f"sqlite:///{tmp_path / 'registry.db'}")
    registry = Registry(database)
    session_id = created(registry)
    now = [100.0]
    holder = Gate(registry, Minter(KEY, "alice"), "holder", False, clock=lambda: now[0])

    async def first_renewal() -> float:
        holder.admit_resume(session_id, LOG)
        taken = registry.lease_holder(session_id)[1]
        assert taken == 100.0 + gates.LEASE_SECONDS
        now[0] = 200.0
        holder.keep_lease(session_id)
        for _ in range(100):  # each wait is longer than a renewal's: the renewal runs within a few
            await asyncio.sleep(0.02)
            if (ends := registry.lease_holder(session_id)[1]) != taken or holder._renewing.done():
                break
        holder.closed(session_id, LOG)
        return ends

    try:
        renewed = asyncio.run(first_renewal())
    finally:
        database.close()
    assert renewed == 200.0 + gates.LEASE_SECONDS


def unnumbered_ask(backend: Backend) -> TurnJudgement:
    """An ask the app gave up on before the worker could number it; the session's log has
    the answer, written 1.3 s after the question."""
    gave_up = ActionFailed(t=0.0, action="ask", message=TIMEOUT, ms=20_000, timeout_s=20.0)
    log = msgspec.structs.replace(answered_log(RECALLED), last_reply_ms=1_300)
    spec = Step("B", ("resume", "ask", "close"), expect="undelivered")
    record = ScenarioRecord("s", Scenario("s", "T", "P", "D", (spec,)), [step("B", READY, gave_up, log, FINISHED)],
                            [seen("B", 1, True)])
    [asked] = judge_scenario(record, FACT, backend).turns
    return asked


def test_an_unnumbered_ask_that_timed_out_says_so_and_when_its_log_had_the_answer():
    asked = unnumbered_ask(Backend())
    assert (asked.turn, asked.verdict) == (1, Verdict.UNDELIVERED)
    assert asked.timed == "no answer within 20 s; the session's log has the answer at +1.3 s"


def test_where_the_logs_answer_is_no_evidence_an_unnumbered_ask_rested_on_its_time_out_alone():
    """Without a record of the requests the log's answer is not a second witness: the ask
    failed loudly, and its verdict rested on the time-out, not on the log."""
    asked = unnumbered_ask(COPILOT)
    assert (asked.turn, asked.verdict) == (None, Verdict.FAILED_LOUDLY)
    assert asked.timed == "no answer within 20 s"


def test_a_timestamp_not_as_the_runtime_writes_it_gives_no_reply_time():
    """The runtime writes JavaScript's toISOString(): always an uppercase Z. A lowercase one
    is not how it writes a time, and is not read as one."""
    events = [stamped("user.message", "1", "2026-12-05T01:10:39.332z", content="q"),
              stamped("assistant.message", "2", "2026-12-05T01:10:40.632z", content="a")]
    assert (summarize(events).last_reply, summarize(events).last_reply_ms) == ("a", None)
