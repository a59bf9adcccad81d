"""The checker: a verdict per turn from independent evidence, compared with the scenario.

A question turn is **kept** only when two independent witnesses agree: the answer names
the fact, *and* the witness model's own record says the fact was in the conversation it
was sent (so the answer did not come from anywhere else). It is **lost** when both agree
the fact is absent, or when the runtime said plainly that the session is not there. In
every other case — a worker that died, a turn with no witness record, evidence that
disagrees, an error that is not "not found" — it is **unknown**, never silently lost.
The event log adds a third piece: whether the resume followed a close. Where the
witness found the fact decides too: only the session's history (the user's own prompt, a
tool's result, a summary, an earlier answer) makes an answer kept; a fact the model saw
only in a system message or in text the runtime put into a user message (a memory block)
makes it unknown, and the judgement keeps the places (``fact_in``).

With the Copilot service as the model nothing records the requests (the runtime reaches
the service directly), so a verdict there rests on the answer alone: kept when the answer
names the value, case-insensitive, lost when it does not. The ``evidence`` field says
which of these a verdict rests on.

A question the app never got an answer to is not always lost: when the session's own
log holds the runtime's answer to it, and that answer names the fact the model was sent,
the verdict is **undelivered** — the context was kept, the app was never told (an SDK and
a runtime that do not speak the same protocol; measured with SDK 1.0.25 on runtime
1.0.40). A step whose runtime or SDK is not the version it asks for measures nothing
about that version: its question is **unknown**, whatever it answered.

The checker is a pure function of a stored run (handoff/runs/record.py), read as its
history (handoff/runs/history.py): the workers' events and the witness's evidence, never
the live processes, so a stored run can be judged again by a later checker.
"""

from __future__ import annotations

from dataclasses import replace

from handoff.backends import explain
from handoff.checker.losses import mark_missing_messages, mark_silent_losses, recoveries, with_tell_expectation
from handoff.checker.verdicts import (
    Basis,
    Expectation,
    FactSeen,
    RunJudgement,
    ScenarioJudgement,
    StepFacts,
    TurnJudgement,
)
from handoff.fact import Fact
from handoff.protocol import ActionFailed, Backend, EventLog
from handoff.runs.history import RunHistory, ScenarioHistory, StepHistory
from handoff.runs.record import RunRecord, ScenarioRecord
from handoff.scenario import Step
from handoff.witness.evidence import Call
from handoff.words import (
    HISTORY_PLACES,
    OPENING_ACTIONS,
    Action,
    FactPlace,
    FaultKind,
    NoTurn,
    TurnKind,
    Verdict,
    WorkerStage,
    turns_in,
)

# An answer written to the log later than this share of the app's time-out is a race the
# evidence names: the verdict held, but not by much.
RACE_FRACTION = 0.5

# Errors that mean "the store has no such session": a clean loss, not a failure to measure.
NOT_FOUND_MARKERS = ("session not found", "returned no sessions")
# The words of a store that could not be reached (handoff/worker/store.py, psycopg): an
# outage, never a session that is gone, whatever else the message says.
OUTAGE_MARKERS = ("is unreachable", "cannot connect to postgresql", "connection refused", "connection is closed")
# The worker's own refusals (a spec it cannot read, a runtime or SDK not of the asked version).
WORKER_CHECKS = (WorkerStage.READ_SPEC, WorkerStage.START)
# The runtime's words when a session has no model to ask: no provider and no token.
NO_PROVIDER_MARKERS = ("no github oauth token or copilot hmac key",)
# How a reason names a place of the fact outside the session's history (HISTORY_PLACES).
OUTSIDE_WORDS = {FactPlace.SYSTEM: "in a system message",
                 FactPlace.INJECTED: "in text the runtime put into a user message"}


def judge(record: RunRecord) -> RunJudgement:
    history = RunHistory.of(record)
    scenarios = tuple(_scenario_judgement(s, record.options.backend) for s in history.scenarios)
    return RunJudgement(record.id, history.fact.value, scenarios)


def judge_scenario(record: ScenarioRecord, fact: Fact, backend: Backend = Backend()) -> ScenarioJudgement:
    """One scenario on its own, as the progress lines judge each when it ends."""
    return _scenario_judgement(ScenarioHistory.of(record, fact), backend)


def _scenario_judgement(history: ScenarioHistory, backend: Backend) -> ScenarioJudgement:
    record, scenario = history.record, history.record.scenario
    turns: list[TurnJudgement] = []
    if record.skipped:
        turns.append(TurnJudgement(record.name, NoTurn.SCENARIO, None, None, verdict=Verdict.SKIPPED,
                                   reason=record.skipped, evidence=Basis.NOTHING))
    else:
        for spec, step in zip(scenario.steps, history.steps):
            turns.extend(_step_turns(history, spec, step, backend))
        expect_tell = {step.name: step.expect_tell for step in scenario.steps}
        turns = mark_missing_messages(mark_silent_losses(turns, expect_tell), expect_tell)
        if record.crashed:
            turns.append(TurnJudgement(record.name, NoTurn.SCENARIO, None, None, verdict=Verdict.CRASHED,
                                       reason=record.crashed, evidence=Basis.NOTHING,
                                       expectations=(Expectation("verdict", "", "crashed", None),)))
    return ScenarioJudgement(record.name, scenario.title, scenario.proves, scenario.does_not_prove, record.seconds,
                             tuple(turns), skipped=record.skipped, crashed=record.crashed,
                             recoveries=() if record.skipped else recoveries(history))


def step_facts(history: StepHistory, spec: Step, calls_seen: bool = True) -> StepFacts:
    """What one step's worker said, from its history, and the versions its scenario step
    (``spec``) asks for. ``calls_seen``: whether the witness stood where the runtime's
    calls to the service go (not with the real Copilot service)."""
    step, said = history.record, history.said
    return StepFacts(
        step=step.step, host=step.host, home=step.home, store=step.store,
        asked_runtime=spec.runtime, asked_sdk=spec.sdk,
        ready=said.ready, eventlog=said.eventlog,
        actions=tuple(said.actions), failures=tuple(said.failures), holding=said.holding, faults=tuple(step.faults),
        finished=said.finished is not None, exit_code=step.exit_code, timed_out=step.timed_out,
        problems=tuple(said.problems), notes=tuple(step.notes), calls=history.calls if calls_seen else None,
    )


def _step_turns(history: ScenarioHistory, spec: Step, step: StepHistory, backend: Backend) -> list[TurnJudgement]:
    """The turns of one step, each numbered as the scenario numbers it (the worker and the
    witness number them within the step)."""
    record, fact, view = history.record, history.fact, step.said
    facts = step_facts(step, spec, backend.seen_on_the_wire)
    judged: list[TurnJudgement] = []
    # Each ask, answered or failed, takes the verdict expected of it by its place in the step.
    ask_turns = sorted([t.turn for t in view.turns if t.kind == TurnKind.ASK] +
                       [f.turn for f in view.failures
                        if f.action == Action.ASK and f.turn is not None and not f.refused])
    for turn in view.turns:
        records, places = step.fact_sent(turn.turn), step.fact_places(turn.turn)
        reached = _fact_seen(records, backend.seen_on_the_wire)
        number = step.in_scenario(turn.turn)
        if turn.kind == TurnKind.ASK:
            verdict, reason, basis = judge_answer(turn.answer, records, fact, backend.seen_on_the_wire, places)
            made = _judged(record.name, spec, facts, number, turn.answer, reached, verdict, reason, basis,
                           turn.session_id, spec.expected(ask_turns.index(turn.turn)))
        else:
            made = _told(record.name, spec, facts, number, turn.answer, reached, turn.session_id)
        judged.append(replace(made, fact_in=_where(places)))
    for failure in view.failures:  # turns the app was told failed
        if failure.action not in (Action.TELL, Action.LOOK_UP, Action.ASK) or failure.refused or failure.turn is None:
            continue
        number = step.in_scenario(failure.turn)
        if failure.action in (Action.TELL, Action.LOOK_UP):  # a look-up tells the fact through a tool
            judged.append(_told(record.name, spec, facts, number, None, FactSeen.NO_REQUEST, view.reported_session_id,
                                Verdict.FAILED_LOUDLY, f"tell failed: {failure.message}", Basis.RUNTIME_ERROR))
            continue
        records, places = step.fact_sent(failure.turn), step.fact_places(failure.turn)
        # The log's last answer can be this question's only if no turn of the step answered at
        # or after its number (one the worker reported answered, then failed after: a hold).
        last = not any(t.turn >= failure.turn for t in view.turns)
        verdict, reason, basis = (last and _undelivered(facts, records, fact, backend, places)) or _failed(failure,
                                                                                                            backend)
        in_log = basis == Basis.LOG_AND_WIRE
        reached = _fact_seen(records, backend.seen_on_the_wire) if in_log else FactSeen.NO_REQUEST
        judged.append(_judged(record.name, spec, facts, number, None, reached, verdict, reason, basis,
                              view.reported_session_id, spec.expected(ask_turns.index(failure.turn)),
                              waited_out(failure, facts.eventlog if in_log else None)))
    if spec.asks and not any(t.kind == TurnKind.ASK for t in judged):
        records, places = step.fact_sent(_ask_number(spec)), step.fact_places(_ask_number(spec))
        verdict, reason, basis = _undelivered(facts, records, fact, backend, places) or _failure(
            facts, step.record.stderr_tail, backend)
        in_log = basis == Basis.LOG_AND_WIRE  # the turn happened, as the log shows; only its answer went missing
        reached = _fact_seen(records, backend.seen_on_the_wire) if in_log else FactSeen.NO_REQUEST
        number = step.in_scenario(_ask_number(spec)) if in_log else None
        failed = next((f for f in view.failures if f.action == Action.ASK), None)
        judged.append(_judged(record.name, spec, facts, number, None, reached, verdict, reason, basis,
                              expected=spec.expected(0),
                              timed=failed and waited_out(failed, facts.eventlog if in_log else None)))
    elif spec.tells and not judged and not facts.finished and not facts.killed_on_purpose:
        # the worker died in its tell, unasked, and the app never heard how it went
        verdict, reason, basis = _failure(facts, step.record.stderr_tail, backend)
        judged.append(_told(record.name, spec, facts, None, None, FactSeen.NO_REQUEST, None, verdict, reason, basis))
    if not judged:
        judged.append(TurnJudgement(record.name, NoTurn.STEP, None, facts))  # a step with no turn still gets its line
    if spec.flat_store_cost is not None:  # the step's evidence, so each of its lines carries it
        cost = facts.store_cost
        expected = _expected_flag("store cost per turn", spec.flat_store_cost, cost and cost.flat, "flat", "grows")
        judged = [replace(j, expectations=j.expectations + (expected,)) for j in judged]
    return sorted(judged, key=lambda t: (t.turn is None, t.turn))  # a turn with no number last


def _told(scenario: str, spec: Step, step: StepFacts, turn: int | None, answer: str | None, reached: FactSeen,
          session: str | None, verdict: Verdict | None = None, reason: str = "",
          basis: Basis | None = None) -> TurnJudgement:
    """A tell: told when the app saw it succeed (a later resume may still find it lost,
    handoff/checker/losses.py), failed loudly when the app was told it failed."""
    judged = TurnJudgement(scenario, TurnKind.TELL, turn, step, answer=answer, fact_reached_model=reached,
                           verdict=verdict, reason=reason, evidence=basis, session=session)
    return with_tell_expectation(judged, spec.expect_tell)


def _ask_number(spec: Step) -> int:
    """The number the worker gives its ask turn within the step: one more than the turns
    the actions before it take."""
    before = spec.actions[:spec.actions.index(Action.ASK)] if Action.ASK in spec.actions else spec.actions
    return turns_in(before) + 1


def _undelivered(step: StepFacts, records: list[bool | None], fact: Fact, backend: Backend,
                 places: list[tuple[str, ...]] | None = None) -> tuple[Verdict, str, Basis] | None:
    """An ask that failed for the app, although the session's log holds the runtime's
    answer to it: undelivered when that answer and the witness's record both say the
    context was there; None when the log holds no answer to this question."""
    log = step.eventlog
    failed = next((f for f in step.failures if f.action == Action.ASK), None)
    if failed is None or log is None or log.last_prompt != fact.question_prompt or log.last_reply is None:
        return None
    if not backend.seen_on_the_wire:
        return None  # the log's answer alone is not a second witness
    verdict, reason, _ = judge_answer(log.last_reply, records, fact, places=places)
    told = f"the session's log holds the answer {log.last_reply!r}, but the app got: {failed.message}"
    if verdict == Verdict.KEPT:
        return Verdict.UNDELIVERED, f"answer in the log, never delivered to the app: {told}", Basis.LOG_AND_WIRE
    return verdict, f"{reason} (in the log; never delivered: {told})", Basis.LOG_AND_WIRE


def waited_out(failure: ActionFailed, log: EventLog | None) -> str | None:
    """For a turn the app gave up waiting for, the times its verdict rested on: the
    time-out, and — when the session's log holds the turn's answer — when the answer was
    written there, so a reader sees how close the race was."""
    if failure.timeout_s is None:
        return None
    text = f"no answer within {failure.timeout_s:g} s"
    if log is not None and log.last_reply is not None and log.last_reply_ms is not None:
        written = log.last_reply_ms / 1000
        text += f"; the session's log has the answer at +{written:.1f} s"
        if written > failure.timeout_s * RACE_FRACTION:
            text += (f" — a race: the answer reached the log less than {1 - RACE_FRACTION:.0%} of the time-out "
                     f"before the app gave up, so a slower machine could have judged this otherwise")
    return text


def _fact_seen(records: list[bool | None], seen_on_the_wire: bool) -> FactSeen:
    if not seen_on_the_wire:
        return FactSeen.NOT_RECORDED
    if not records:
        return FactSeen.NO_REQUEST
    checked = [sent for sent in records if sent is not None]
    if not checked:
        return FactSeen.UNCHECKED
    return FactSeen.YES if any(checked) else FactSeen.NO


def _failure(step: StepFacts, stderr_tail: str, backend: Backend) -> tuple[Verdict, str, Basis]:
    """Verdict, reason and evidence for an ask turn that produced no answer."""
    for error in step.failures:
        if error.refused:
            return Verdict.REFUSED, f"the guard refused {error.action}: {error.message}", Basis.GUARD
    for error in step.failures:
        if error.action in OPENING_ACTIONS or error.action == Action.ASK:
            return _failed(error, backend)
    for error in step.failures:
        if error.action in WORKER_CHECKS:  # the worker would not measure: nothing the app was told
            return Verdict.UNKNOWN, f"{error.action} failed: {error.message}", Basis.RUNTIME_ERROR
        return Verdict.FAILED_LOUDLY, f"{error.action} failed: {error.message}", Basis.RUNTIME_ERROR
    if step.timed_out:
        return Verdict.UNKNOWN, "worker timed out before answering", Basis.NOTHING
    if step.problems:
        return Verdict.UNKNOWN, f"the worker broke the protocol: {step.problems[0]}", Basis.NOTHING
    if not step.finished:
        if step.killed_on_purpose:
            kills = ", ".join(f"{f.kind} at {f.point}" for f in step.faults
                              if f.kind in (FaultKind.KILL, FaultKind.KILL_RUNTIME))
            return Verdict.UNKNOWN, f"the worker was killed on purpose ({kills}) before it could answer", Basis.NOTHING
        tail = f": {stderr_tail.splitlines()[-1]}" if stderr_tail.strip() else ""
        notes = "".join(f"; {note}" for note in step.notes)
        return Verdict.UNKNOWN, f"worker ended without 'finished' (exit code {step.exit_code}){tail}{notes}", \
            Basis.NOTHING
    return Verdict.UNKNOWN, "the ask turn produced no answer", Basis.NOTHING


def _failed(error, backend: Backend) -> tuple[Verdict, str, Basis]:
    """Verdict, reason and evidence for a failed opening or ask the app was told about."""
    message = error.message
    explained = explain(backend, message)
    said = f"{message} ({explained})" if explained else message
    if any(marker in message.lower() for marker in OUTAGE_MARKERS):
        return Verdict.FAILED_LOUDLY, f"{error.action} failed, the store was out: {said}", Basis.RUNTIME_ERROR
    if any(marker in message.lower() for marker in NOT_FOUND_MARKERS):
        return Verdict.LOST, f"{error.action} failed: {said}", Basis.RUNTIME_ERROR
    if any(marker in message.lower() for marker in NO_PROVIDER_MARKERS):
        return Verdict.NO_PROVIDER, (f"{error.action} failed, no model was asked: the session does not store "
                                     f"its provider settings and this runtime was given none ({said})"), \
            Basis.RUNTIME_ERROR
    return Verdict.FAILED_LOUDLY, f"{error.action} failed (not a 'not found'): {said}", Basis.RUNTIME_ERROR


def _where(places: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Every place the turn's requests carried the fact, once each, in FactPlace's order."""
    found = {place for where in places for place in where}
    return tuple(place.value for place in FactPlace if place in found)


def _in_history(fact_sent: list[bool | None], places: list[tuple[str, ...]] | None) -> list[bool | None]:
    """Each record's ``fact_sent``, counting only the session's history: a record that says
    where the fact was and names no place of the history (only a system message, or text
    the runtime put into a user message, such as a memory block) did not carry it there. A
    record that says nowhere while it was sent predates the places, and counts as before."""
    if places is None:
        return fact_sent
    return [False if sent and where and not any(place in HISTORY_PLACES for place in where) else sent
            for sent, where in zip(fact_sent, places)]


def judge_answer(answer: str | None, fact_sent: list[bool | None], fact: Fact,
                 seen_on_the_wire: bool = True,
                 places: list[tuple[str, ...]] | None = None) -> tuple[Verdict, str, Basis]:
    """Verdict, reason and evidence for an ask turn that answered, from the answer and the
    records of what the model was sent. A record whose ``fact_sent`` is None checked
    nothing and is no evidence either way. ``places`` (one per record: where the witness
    found the fact) attributes it: only the session's history (HISTORY_PLACES) makes an
    answer *kept*; the fact seen only elsewhere (a memory block) is named in the reason.
    Without any way to see the requests (``seen_on_the_wire`` False) the answer alone decides."""
    in_history = _in_history(fact_sent, places)
    verdict, reason, basis = _judge_answer(answer, in_history, fact, seen_on_the_wire)
    outside = [place for place in _where(places or []) if place not in HISTORY_PLACES]
    if not outside or basis != Basis.ANSWER_AND_WIRE:
        return verdict, reason, basis
    where = " and ".join(OUTSIDE_WORDS[place] for place in outside)
    if any(in_history):
        return verdict, f"{reason}; the fact was {where} too, outside the session's history", basis
    if fact.is_in(answer):
        return (Verdict.UNKNOWN, f"answer names the fact, but the model was sent it only outside the session's "
                                 f"history ({where}, e.g. a memory): it proves nothing about persistence", basis)
    return verdict, f"{reason} in the session's history (only {where})", basis



def _judge_answer(answer: str | None, fact_sent: list[bool | None], fact: Fact,
                  seen_on_the_wire: bool) -> tuple[Verdict, str, Basis]:
    named = fact.is_in(answer)
    if not seen_on_the_wire:
        if named:
            return Verdict.KEPT, "the answer names the value (requests to this model cannot be recorded)", Basis.ANSWER_ONLY
        return Verdict.LOST, "the answer does not name the value (requests to this model cannot be recorded)", \
            Basis.ANSWER_ONLY
    if not fact_sent:
        return Verdict.UNKNOWN, "the witness model has no record of this turn", Basis.NOTHING
    checked = [sent for sent in fact_sent if sent is not None]
    if not checked:
        return Verdict.UNKNOWN, "the witness model was not told which fact to look for", Basis.NOTHING
    sent = any(checked)
    if named and sent:
        return Verdict.KEPT, "answer names the fact and the model was sent it", Basis.ANSWER_AND_WIRE
    if not named and not sent:
        return Verdict.LOST, "answer lacks the fact and the model was not sent it", Basis.ANSWER_AND_WIRE
    if named:
        return Verdict.UNKNOWN, "answer names the fact but the model was not sent it", Basis.ANSWER_AND_WIRE
    return Verdict.UNKNOWN, "the model was sent the fact but the answer lacks it", Basis.ANSWER_AND_WIRE


def _judged(scenario: str, spec: Step, step: StepFacts, turn: int | None, answer: str | None, reached: FactSeen,
            verdict: Verdict, reason: str, basis: Basis, session: str | None = None,
            expected: str | None = None, timed: str | None = None) -> TurnJudgement:
    if step.substituted:
        verdict, reason = Verdict.UNKNOWN, f"not the versions the step asks for ({step.substituted}): {reason}"
    expectations = [_expected_verdict(expected, verdict)]
    log = step.eventlog
    if spec.forked is not None:
        forked = None if log is None else log.branch_points > 0
        expectations.append(_expected_flag("forked", spec.forked, forked, "forked", "no fork"))
    if spec.closed_before_resume is not None:
        expectations.append(_expected_flag("closed before resume", spec.closed_before_resume, step.closed_before_resume,
                                           "closed", "not closed"))
    if spec.loaded_all_events is not None:
        expectations.append(_expected_flag("loaded all events", spec.loaded_all_events, step.loaded_all_events,
                                           "all events loaded", "events skipped"))
    if spec.calls is not None:
        expectations.append(_expected_calls(spec.calls, step.calls))
    if step.closed_before_resume is False and verdict == Verdict.KEPT:
        reason += "; but no session.shutdown precedes the resume: not a resume-after-close"
    if step.loaded_all_events is False:
        reason += (f"; the resume loaded {log.resume_event_count} of the {log.events_before_resume} events "
                   f"in the log")
    return TurnJudgement(scenario, TurnKind.ASK, turn, step, answer=answer, fact_reached_model=reached, verdict=verdict,
                         reason=reason, evidence=basis, expectations=tuple(expectations), session=session,
                         timed=timed)


def _expected_verdict(wanted: str | None, got: Verdict) -> Expectation:
    if wanted == got:
        met = True
    elif not got.judged:
        met = None  # "unknown" contradicts nothing: it says the evidence was not there
    else:
        met = False
    return Expectation("verdict", wanted or "", got.value, met)


def _expected_calls(wanted: tuple[str, ...], calls: tuple[Call, ...] | None) -> Expectation:
    """The kinds of call the step's runtime made to the service besides its chats, against
    those its scenario names; any carrying the fact or the session's id is not as expected:
    what a session start tells the service is then more than the step says."""
    shown = ", ".join(wanted) or "none"
    if calls is None:
        return Expectation("service calls", shown, "—", None)
    made = sorted({call.kind for call in calls if call.kind})
    carried = [what for what, found in (("the fact", any(call.fact_sent for call in calls)),
                                        ("a session id", any(call.session_id for call in calls))) if found]
    got = (", ".join(made) or "none") + (f"; carrying {' and '.join(carried)}" if carried else "")
    return Expectation("service calls", shown, got, made == sorted(wanted) and not carried)


def _expected_flag(name: str, wanted: bool, got: bool | None, yes: str, no: str) -> Expectation:
    shown = "—" if got is None else (yes if got else no)
    return Expectation(name, yes if wanted else no, shown, None if got is None else got == wanted)

