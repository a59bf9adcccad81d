"""The checker: a verdict per turn from independent evidence, compared with the scenario.

A question turn is **kept** only when two independent witnesses agree: the answer names
the fact, *and* the witness model's own record says the fact was in the conversation it
was sent (so the answer did not come from anywhere else). It is **lost** when both agree
the fact is absent, or when the runtime said plainly that the session is not there. In
every other case — a worker that died, a turn with no witness record, evidence that
disagrees, an error that is not "not found" — it is **unknown**, never silently lost.
The event log adds a third piece: whether the resume followed a close.

With the Copilot service as the model nothing records the requests (the runtime reaches
the service directly), so a verdict there rests on the answer alone: kept when the answer
names the value, case-insensitive, lost when it does not. The ``evidence`` column says
which of these a verdict rests on.
"""

from __future__ import annotations

from dataclasses import dataclass

from handoff.fact import Fact
from handoff.results import ScenarioResult, StepResult
from handoff.scenario import Scenario, Step
from handoff.worker.spec import OPENING_ACTIONS

# Errors that mean "the store has no such session": a clean loss, not a failure to measure.
NOT_FOUND_MARKERS = ("session not found", "returned no sessions")
# The runtime's words when a session has no model to ask: no provider and no token.
NO_PROVIDER_MARKERS = ("no github oauth token or copilot hmac key",)

# What a verdict rests on, as the table shows it.
ANSWER_AND_WIRE = "answer + wire"  # the answer, and the witness's or relay's record of the request
ANSWER_ONLY = "answer only"  # no record of the request exists (the Copilot service)
RUNTIME_ERROR = "runtime error"
GUARD = "guard"
NOTHING = "—"


@dataclass(frozen=True)
class Row:
    scenario: str
    step: str
    turn: str
    kind: str  # "tell" | "ask"
    ran_in: str
    store: str
    closed_before_resume: str
    answer: str
    fact_reached_model: str
    event_log: str
    verdict: str  # kept | lost | unknown | refused | no-provider | "" for a tell turn
    basis: str
    evidence: str  # what the verdict rests on: ANSWER_AND_WIRE, ANSWER_ONLY, ...
    expected: str
    match: bool | None  # None for a row nothing is expected of


def _yes_no(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _ran_in(step: StepResult) -> str:
    ready = step.ready
    if not ready:
        return f"{step.step}: no runtime"
    address = ready.get("address")
    return f"{step.step} pid {ready['pid']}@{ready['hostname']}" + (f" {address}" if address else "")


def _store(step: StepResult) -> str:
    if step.store != "home":
        return step.store
    return {"shared": "shared", "own": f"own ({step.step})", "copied": f"copy ({step.step})"}[step.home]


def _event_log(step: StepResult) -> str:
    parts = []
    log = step.first("eventlog")
    if log and log.get("found"):
        if log.get("resumes"):
            parts.append(f"resume loaded {log.get('resume_event_count')} events")
            if log.get("already_in_use"):
                parts.append("alreadyInUse")
        if log.get("starts", 0) > 1:
            parts.append(f"{log['starts']} session.start roots")
        if log.get("unreadable_lines"):
            parts.append(f"{log['unreadable_lines']} torn line(s)")
        if log.get("branch_points"):
            parts.append(f"{log['branch_points']} fork(s)")
        if not parts:
            parts.append(f"{log.get('events')} events")
    elif log:
        parts.append("no event log for this id")
    for action in step.of("action"):
        if action["action"] == "metadata":
            parts.append("metadata: found" if action.get("found") else "metadata: None")
        elif action["action"] in ("list", "resume-most-recent"):
            parts.append(f"listed {len(action.get('listed', []))}")
        elif action["action"] == "discover":
            parts.append(f"registry lists {len(action.get('registered', []))}")
    for error in step.of("error"):
        parts.append(f"{error['action']} failed")
    return "; ".join(parts) or "—"


def _closed_before_resume(step: StepResult) -> bool | None:
    log = step.first("eventlog")
    return log.get("closed_before_resume") if log else None


def _failure(step: StepResult) -> tuple[str, str, str]:
    """Verdict, reason and evidence for an ask turn that produced no answer."""
    for error in step.of("error"):
        if error.get("refused"):
            return "refused", f"the guard refused {error['action']}: {error.get('message', '')}", GUARD
    for error in step.of("error"):
        if error["action"] in OPENING_ACTIONS or error["action"] == "ask":
            message = error.get("message", "")
            if any(marker in message.lower() for marker in NOT_FOUND_MARKERS):
                return "lost", f"{error['action']} failed: {message}", RUNTIME_ERROR
            if any(marker in message.lower() for marker in NO_PROVIDER_MARKERS):
                return "no-provider", (f"{error['action']} failed, no model was asked: the session does not store its "
                                       f"provider settings and this runtime was given none ({message})"), RUNTIME_ERROR
            return "unknown", f"{error['action']} failed (not a 'not found'): {message}", RUNTIME_ERROR
    for error in step.of("error"):
        return "unknown", f"{error['action']} failed: {error.get('message', '')}", RUNTIME_ERROR
    if step.timed_out:
        return "unknown", "worker timed out before answering", NOTHING
    if not step.finished:
        tail = f": {step.stderr_tail.splitlines()[-1]}" if step.stderr_tail.strip() else ""
        return "unknown", f"worker ended without 'finished' (exit code {step.exit_code}){tail}", NOTHING
    return "unknown", "the ask turn produced no answer", NOTHING


def judge_answer(answer: str | None, fact_sent: list[bool | None], fact: Fact,
                 seen_on_the_wire: bool = True) -> tuple[str, str, str]:
    """Verdict, reason and evidence for an ask turn that answered, from the answer and the
    records of what the model was sent. A record whose ``fact_sent`` is None checked
    nothing and is no evidence either way. Without any way to see the requests
    (``seen_on_the_wire`` False) the answer alone decides."""
    named = fact.is_in(answer)
    if not seen_on_the_wire:
        if named:
            return "kept", "the answer names the value (requests to this model cannot be recorded)", ANSWER_ONLY
        return "lost", "the answer does not name the value (requests to this model cannot be recorded)", ANSWER_ONLY
    if not fact_sent:
        return "unknown", "the witness model has no record of this turn", NOTHING
    checked = [sent for sent in fact_sent if sent is not None]
    if not checked:
        return "unknown", "the witness model was not told which fact to look for", NOTHING
    sent = any(checked)
    if named and sent:
        return "kept", "answer names the fact and the model was sent it", ANSWER_AND_WIRE
    if not named and not sent:
        return "lost", "answer lacks the fact and the model was not sent it", ANSWER_AND_WIRE
    if named:
        return "unknown", "answer names the fact but the model was not sent it", ANSWER_AND_WIRE
    return "unknown", "the model was sent the fact but the answer lacks it", ANSWER_AND_WIRE


def _short(text: str | None, width: int = 48) -> str:
    if text is None:
        return "—"
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def rows_for(scenario: Scenario, result: ScenarioResult, fact: Fact, seen_on_the_wire: bool = True) -> list[Row]:
    if result.skipped_reason:
        return [Row(scenario=result.name, step="—", turn="—", kind="—", ran_in="—", store="—",
                    closed_before_resume="—", answer="—", fact_reached_model="—",
                    event_log=f"skipped: {result.skipped_reason}", verdict="skipped",
                    basis=result.skipped_reason, evidence=NOTHING, expected="", match=None)]
    rows: list[Row] = []
    for spec, step in zip(scenario.steps, result.steps):
        rows.extend(_step_rows(spec, step, result, fact, seen_on_the_wire))
    return rows


def _step_rows(spec: Step, step: StepResult, result: ScenarioResult, fact: Fact, seen_on_the_wire: bool) -> list[Row]:
    rows = []
    closed = _closed_before_resume(step)
    common = dict(
        scenario=result.name,
        step=step.step,
        ran_in=_ran_in(step),
        store=_store(step),
        closed_before_resume=_yes_no(closed),
        event_log=_event_log(step),
    )
    turns = step.of("turn")
    for turn in turns:
        records = [
            e.fact_sent for e in result.evidence if e.step == step.step and e.turn == str(turn["turn"])
        ]
        checked = [sent for sent in records if sent is not None]
        if not seen_on_the_wire:
            reached = "not recorded"
        else:
            reached = "no request" if not records else _yes_no(any(checked) if checked else None)
        if turn["kind"] == "ask":
            judged = judge_answer(turn.get("answer"), records, fact, seen_on_the_wire)
            rows.append(_judged(spec, common, str(turn["turn"]), "ask", turn.get("answer"), reached, *judged,
                                closed, step.first("eventlog")))
        else:
            rows.append(
                Row(**common, turn=str(turn["turn"]), kind="tell", answer=_short(turn.get("answer")),
                    fact_reached_model=reached, verdict="", basis="", evidence="", expected="", match=None)
            )
    if spec.asks and not any(t["kind"] == "ask" for t in turns):
        rows.append(_judged(spec, common, "—", "ask", None, "no request", *_failure(step), closed, step.first("eventlog")))
    if not turns and not spec.asks:
        # A step with no turn to show (a crash mid-write, say) still gets its line.
        holding = step.first("holding")
        what = "killed on purpose" + (f" during {holding['during']}" if holding and holding.get("during") else "")
        rows.append(Row(**common, turn="—", kind="step", answer=what if step.killed_on_purpose else "—",
                        fact_reached_model="—", verdict="", basis="", evidence="", expected="", match=None))
    return rows


def _judged(spec, common, turn, kind, answer, reached, verdict, basis, evidence, closed, log=None) -> Row:
    match = verdict == spec.expect
    expected = spec.expect or ""
    if spec.forked is not None:
        forks = (log or {}).get("branch_points", 0) > 0
        expected += ", forked" if spec.forked else ", no fork"
        match = match and forks == spec.forked
    if spec.closed_before_resume is not None:
        expected += f", {'closed' if spec.closed_before_resume else 'not closed'}"
        match = match and closed == spec.closed_before_resume
    if closed is False and verdict == "kept":
        basis += "; but no session.shutdown precedes the resume: not a resume-after-close"
    return Row(**common, turn=turn, kind=kind, answer=_short(answer), fact_reached_model=reached,
               verdict=verdict, basis=basis, evidence=evidence, expected=expected, match=match)
