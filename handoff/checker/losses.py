"""Silent losses and recovery times: what a scenario's turns say about each other.

A tell is judged on its own only as far as the app could see it: it succeeded (told) or
the app was told it failed (failed loudly). Whether a told turn *stayed* is known only
later, when a resume of the same session is asked about it. If that resume succeeded
and the model was then not sent the fact (or, without a record of the requests, the
answer lacks it), every earlier tell of that session the app saw succeed — and whose
fact did reach the model when it was told — was **lost silently**: the app was told it
worked, and the session it resumed does not have it. The event log gives a second, independent
count: if the log a resume loaded holds fewer user messages than the turns of that
session the app saw succeed in earlier steps, the missing ones are lost silently too,
whatever they said. A resume that fails ("not found") or a session created anew under the
same id is not a silent loss: the app was told, or it is not the same conversation.

Recovery: for each fault that healed, the time from its heal to the first resume that
succeeded after it — how long the app waited before the session was back.
"""

from __future__ import annotations

from dataclasses import replace

from handoff.checker.verdicts import Basis, Expectation, FactSeen, Recovery, TurnJudgement
from handoff.runs.history import ScenarioHistory
from handoff.words import RESUMING_ACTIONS, TOLD, TurnKind, Verdict

# A tell whose fact demonstrably reached the model, or where requests cannot be recorded.
DELIVERED = (FactSeen.YES, FactSeen.NOT_RECORDED)


def _resumed(turn: TurnJudgement) -> bool:
    """Whether the turn's step opened its session by resuming it (and not by creating it).
    Asked only of an ask, which always has its step's facts."""
    return any(done.action in RESUMING_ACTIONS and done.session_id == turn.session for done in turn.step.actions)


def _lost_after_resume(turn: TurnJudgement) -> bool:
    return (turn.kind == TurnKind.ASK and turn.verdict == Verdict.LOST and turn.session is not None
            and turn.evidence in (Basis.ANSWER_AND_WIRE, Basis.ANSWER_ONLY) and _resumed(turn))


def _why(told: TurnJudgement, finder: TurnJudgement) -> str:
    said = f" (it answered {told.answer!r})" if told.answer else ""
    log = finder.step.eventlog  # the finder is an ask, which always has its step's facts
    held = ""
    if log is not None and log.messages_before_resume is not None:
        held = (f"; the resumed log had {log.messages_before_resume} user message(s) before its resume"
                f"{f' and {log.unreadable_lines} unreadable line(s)' if log.unreadable_lines else ''}")
    return (f"the app was told this turn succeeded{said}; step {finder.step.step} resumed "
            f"the session and turn {finder.turn} was answered without the fact ({finder.reason}){held}")


def mark_silent_losses(turns: list[TurnJudgement], expect_tell: dict[str, str | None]) -> list[TurnJudgement]:
    """The turns, with every told tell that a later successful resume lost marked
    lost-silently and checked again against what its step expected (``expect_tell``, by step)."""
    marked = list(turns)
    # The told tells not yet found lost, by session and then by step, in order: a finder
    # takes those of its session from every step but its own, each tell once (a pass over
    # the turns, however many a stored run holds).
    pending: dict[str | None, dict[int, list[int]]] = {}
    for index, turn in enumerate(marked):
        if _lost_after_resume(turn):  # a finder
            steps = pending.get(turn.session, {})
            for step in [key for key in steps if key != id(turn.step)]:
                for earlier in steps.pop(step):
                    told = marked[earlier]
                    lost = replace(told, verdict=Verdict.LOST_SILENTLY, reason=_why(told, turn), evidence=turn.evidence)
                    marked[earlier] = with_tell_expectation(lost, expect_tell.get(told.step.step))
        elif turn.kind == TurnKind.TELL and turn.verdict is None and turn.fact_reached_model in DELIVERED:
            pending.setdefault(turn.session, {}).setdefault(id(turn.step), []).append(index)
    return marked


def _acknowledged(turn: TurnJudgement) -> bool:
    """A turn the app saw succeed: a tell it was not told failed, an ask that answered."""
    if turn.kind == TurnKind.TELL:
        return turn.verdict in (None, Verdict.LOST_SILENTLY)
    return turn.kind == TurnKind.ASK and turn.answer is not None


def mark_missing_messages(turns: list[TurnJudgement], expect_tell: dict[str, str | None]) -> list[TurnJudgement]:
    """The turns, with the last told tells a resume's log is short of marked lost-silently."""
    marked = list(turns)
    steps = list({id(t.step): t.step for t in marked if t.step is not None}.values())
    for step in steps:
        log = step.eventlog
        if log is None or not log.found or log.messages_before_resume is None:
            continue
        if not any(done.action in RESUMING_ACTIONS and done.session_id == log.session_id for done in step.actions):
            continue
        earlier = [i for i, t in enumerate(marked) if t.step is not None and steps.index(t.step) < steps.index(step)
                   and t.session == log.session_id and _acknowledged(t)]
        missing = len(earlier) - log.messages_before_resume
        if missing <= 0:
            continue
        why = (f"the app saw {len(earlier)} turn(s) of this session succeed, but the log step {step.step} resumed "
               f"had {log.messages_before_resume} user message(s) before its resume: the last {missing} are missing")
        for index in earlier[-missing:]:
            if marked[index].kind == TurnKind.TELL and marked[index].verdict is None:
                lost = replace(marked[index], verdict=Verdict.LOST_SILENTLY, reason=why, evidence=Basis.EVENT_LOG)
                marked[index] = with_tell_expectation(lost, expect_tell.get(lost.step.step))
    return marked


def with_tell_expectation(judged: TurnJudgement, wanted: str | None) -> TurnJudgement:
    """A tell's expectation: none for a plain told tell; otherwise what the scenario
    declared (told, if nothing), met or not. An undeclared silent loss contradicts it;
    an undeclared loud failure is only something that could not be judged."""
    got = judged.verdict.value if judged.verdict else TOLD
    if wanted is None and got == TOLD:
        return replace(judged, expectations=())
    wanted = wanted or TOLD
    met = True if wanted == got else (None if judged.verdict in (Verdict.FAILED_LOUDLY, Verdict.UNKNOWN) else False)
    return replace(judged, expectations=(Expectation("tell", wanted, got, met),))


def recoveries(history: ScenarioHistory) -> tuple[Recovery, ...]:
    """For each healed fault, seconds from its heal to the next successful resume."""
    resumes = sorted((event.t, step.name) for step in history.steps for event in step.said.actions
                     if event.action in RESUMING_ACTIONS)
    found = []
    for step in history.steps:
        for fault in step.record.faults:
            if fault.healed_at is None:
                continue
            after = next((t for t, _ in resumes if t >= fault.healed_at), None)
            found.append(Recovery(fault.kind, step.name, None if after is None else round(after - fault.healed_at, 3)))
    return tuple(found)
