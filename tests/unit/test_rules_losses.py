"""The rules of handoff/checker/losses.py that its two loss counts rest on, each pinned on
its own with judgements made by hand (and, where a stored run can say it, from a record):

* only an ask answered without the fact after a resume finds earlier tells lost; a tell,
  whatever verdict and evidence it carries, is never a finder;
* a turn the app saw succeed is a tell it was not told failed or an ask that answered:
  a line that is no turn's (a step's own line) is none, whatever it carries;
* a short log relabels only tells: an ask it counts keeps its verdict, even none;
* a log the worker did not find counts no messages, whatever counts its line holds;
* a line that belongs to no step (a crashed scenario's) is no earlier turn of any step.
"""

from __future__ import annotations

from dataclasses import replace

from handoff.checker.checks import judge_scenario
from handoff.checker.losses import mark_missing_messages, mark_silent_losses
from handoff.checker.verdicts import Basis, FactSeen, StepFacts, TurnJudgement
from handoff.protocol import ActionDone, EventLog
from handoff.scenario import Step
from handoff.words import NoTurn, TurnKind, Verdict
from tests.unit.test_checker_paths import FACT, RECALLED, facts, turn
from tests.unit.test_losses import done, told_then

KEPT = Step("B", ("resume", "ask", "close"), expect="kept")


def _log(messages: int | None, found: bool = True) -> EventLog:
    return EventLog(t=0.0, session_id="sid", found=found, events=3, starts=1, resumes=1, closed_before_resume=True,
                    resume_event_count=3, messages_before_resume=messages)


def _created(name: str) -> StepFacts:
    return replace(facts(name), actions=(ActionDone(t=0.0, action="create", session_id="sid", ms=1),))


def _resumed(name: str, log: EventLog | None = None) -> StepFacts:
    return replace(facts(name, eventlog=log), actions=(ActionDone(t=0.0, action="resume", session_id="sid", ms=1),))


def _tell(step: StepFacts, number: int, **fields) -> TurnJudgement:
    fields.setdefault("fact_reached_model", FactSeen.YES)
    return TurnJudgement("s", TurnKind.TELL, number, step, answer="OK", session="sid", **fields)


def _ask(step: StepFacts, number: int, **fields) -> TurnJudgement:
    return TurnJudgement("s", TurnKind.ASK, number, step, session="sid", **fields)


def test_a_tell_judged_lost_after_a_resume_finds_no_earlier_tell_lost():
    """Only an ask's answer can say a resumed session lacks the fact: a tell in the
    resumed step, even one judged lost on an answer, takes nothing earlier with it."""
    a, b = _created("A"), _resumed("B")
    told = _tell(a, 1)
    lost_tell = _tell(b, 2, verdict=Verdict.LOST, evidence=Basis.ANSWER_ONLY)
    marked = mark_silent_losses([told, lost_tell], {})
    assert marked == [told, lost_tell]
    # the same tell lost before an ask that was answered without it is found lost: the rule is the ask's
    lost_ask = _ask(b, 2, answer="I don't know", verdict=Verdict.LOST, evidence=Basis.ANSWER_ONLY)
    assert mark_silent_losses([told, lost_ask], {})[0].verdict == Verdict.LOST_SILENTLY


def test_a_line_that_is_no_turn_is_not_a_turn_the_app_saw_succeed():
    """A step's own line (no turn of it happened) is no message the log should hold, even
    when it names the session and carries an answer: only the tell counts against a log
    of one message, and nothing is missing."""
    a0, a, b = _created("A0"), _created("A"), _resumed("B", _log(1))
    line = TurnJudgement("s", NoTurn.STEP, None, a0, answer="OK", session="sid")
    told = _tell(a, 1)
    ask = _ask(b, 2, answer=RECALLED, verdict=Verdict.KEPT, evidence=Basis.ANSWER_AND_WIRE)
    marked = mark_missing_messages([line, told, ask], {})
    assert [t.verdict for t in marked] == [None, None, Verdict.KEPT]
    # an ask that answered does count: with it, the log of one message is one short
    asked = _ask(a0, 1, answer="OK", verdict=Verdict.KEPT, evidence=Basis.ANSWER_AND_WIRE)
    assert [t.verdict for t in mark_missing_messages([asked, told, ask], {})] == [
        Verdict.KEPT, Verdict.LOST_SILENTLY, Verdict.KEPT]


def test_a_short_log_relabels_only_tells_and_an_ask_it_counts_keeps_its_verdict_even_none():
    a, b = _created("A"), _resumed("B", _log(0))
    told = _tell(a, 1)
    unjudged_ask = _ask(a, 2, answer="OK")  # answered, and no verdict given to it
    ask = _ask(b, 3, answer=RECALLED, verdict=Verdict.KEPT, evidence=Basis.ANSWER_AND_WIRE)
    first, second, third = mark_missing_messages([told, unjudged_ask, ask], {})
    assert (first.verdict, first.evidence) == (Verdict.LOST_SILENTLY, Basis.EVENT_LOG)
    assert second == unjudged_ask and third == ask


def test_a_log_the_worker_did_not_find_counts_no_messages_whatever_its_line_holds():
    """A stored run's eventlog line that says the log was not found is no evidence of a
    short log, even when it also holds a count of none."""
    record = told_then([done("resume"), turn(1, "ask", RECALLED), _log(0, found=False)], spec_b=KEPT, b_seen=True)
    tell, ask = judge_scenario(record, FACT).turns
    assert (tell.verdict, ask.verdict) == (None, Verdict.KEPT)
    found = told_then([done("resume"), turn(1, "ask", RECALLED), _log(0)], spec_b=KEPT, b_seen=True)
    assert judge_scenario(found, FACT).turns[0].verdict == Verdict.LOST_SILENTLY  # the same log, found


def test_a_line_of_no_step_is_no_earlier_turn_and_does_not_stop_the_count():
    """A line that belongs to no step (a crashed or skipped scenario's) is left as it is,
    and the turns of the steps are still counted against the resumed log."""
    a, b = _created("A"), _resumed("B", _log(0))
    crashed = TurnJudgement("s", NoTurn.SCENARIO, None, None, verdict=Verdict.CRASHED, session="sid")
    told = _tell(a, 1)
    ask = _ask(b, 2, answer=RECALLED, verdict=Verdict.KEPT, evidence=Basis.ANSWER_AND_WIRE)
    marked = mark_missing_messages([crashed, told, ask], {})
    assert marked[0] == crashed
    assert [t.verdict for t in marked[1:]] == [Verdict.LOST_SILENTLY, Verdict.KEPT]
