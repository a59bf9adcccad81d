"""How one judged turn reads in a table: each column's text, from the judgement's data.

The only place where verdicts, evidence and expectations become words; the terminal
table, the Markdown and a diff of two runs all use these.
"""

from __future__ import annotations

from handoff.checker.verdicts import Recovery, StepFacts, TurnJudgement
from handoff.words import Action, HomeKind, NoTurn, StoreKind

DASH = "—"


def yes_no(value: bool | None) -> str:
    return DASH if value is None else ("yes" if value else "no")


def short(text: str | None, width: int = 48) -> str:
    if text is None:
        return DASH
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def turn_number(judged: TurnJudgement) -> str:
    """The turn's number across the scenario; a dash for a turn that never happened."""
    return str(judged.turn) if judged.turn is not None else DASH


def turn(judged: TurnJudgement) -> str:
    if judged.kind == NoTurn.SCENARIO:
        return f"{DASH} {DASH}"
    return f"{turn_number(judged)} {judged.kind}"


def where(step: StepFacts | None, machine: str) -> str:
    """Short "ran in" for the learner's table: the step and its process id, and the host
    when it is not this machine (``B 4160``, ``B 1@host-b``): a new pid is a new process."""
    if step is None:
        return DASH
    if step.ready is None:
        return f"{step.step}: no runtime"
    host = "" if step.ready.hostname == machine else f"@{step.ready.hostname}"
    return f"{step.step} {step.ready.pid}{host}"


def step_at(step: StepFacts | None, machine: str) -> str:
    """A step in the learner's table: its name, and the host when it is not this machine
    (``B``, ``B@host-b``). Every step is a new process (the plan says so); the pid is in
    the wide view and the Markdown table."""
    if step is None:
        return DASH
    if step.ready is None:
        return f"{step.step} (no runtime)"
    return step.step if step.ready.hostname == machine else f"{step.step}@{step.ready.hostname}"


def ran_in(step: StepFacts | None) -> str:
    if step is None:
        return DASH
    if step.ready is None:
        return f"{step.step}: no runtime"
    address = f" {step.ready.address}" if step.ready.address else ""
    return (f"{step.step} pid {step.ready.pid}@{step.ready.hostname}{address}, runtime {step.ready.runtime_version}, "
            f"SDK {step.ready.sdk_version}")


def store(step: StepFacts | None) -> str:
    if step is None:
        return DASH
    if step.store != StoreKind.HOME:
        return step.store
    words = {HomeKind.SHARED: "shared", HomeKind.OWN: f"own ({step.step})", HomeKind.COPIED: f"copy ({step.step})",
             HomeKind.ANONYMOUS: f"anonymous ({step.step})", HomeKind.RESTARTED: "restarted"}
    return words.get(step.home, step.home)


def closed_before_resume(judged: TurnJudgement) -> str:
    return DASH if judged.step is None else yes_no(judged.step.closed_before_resume)


def answer(judged: TurnJudgement) -> str:
    if judged.kind == NoTurn.STEP:
        return killed(judged.step) or DASH
    return short(judged.answer)


def killed(step: StepFacts | None) -> str | None:
    if step is None or not step.killed_on_purpose:
        return None
    during = step.holding.during if step.holding else None
    return "killed on purpose" + (f" during {during}" if during else "")


def fact_reached_model(judged: TurnJudgement) -> str:
    return DASH if judged.kind in tuple(NoTurn) else judged.fact_reached_model.value


def event_log(judged: TurnJudgement) -> str:
    """The step's event log, discovery results and failed actions, in a few words."""
    if judged.kind == NoTurn.SCENARIO:
        return f"{judged.verdict.value}: {judged.reason}" if judged.verdict else DASH
    step = judged.step
    parts = []
    log = step.eventlog
    if log and log.found:
        if log.resumes:
            held = "" if log.messages_before_resume is None else f" ({plural(log.messages_before_resume, 'user message')})"
            if step.loaded_all_events is False:
                parts.append(f"resume loaded {log.resume_event_count} of {log.events_before_resume} events{held}")
            else:
                parts.append(f"resume loaded {log.resume_event_count} events{held}")
            if log.already_in_use:
                parts.append("alreadyInUse")
        if log.starts > 1:
            parts.append(f"{log.starts} session.start roots")
        if log.unreadable_lines:
            parts.append(f"{log.unreadable_lines} torn line(s)")
        if log.branch_points:
            parts.append(f"{log.branch_points} fork(s)")
        if not parts:
            parts.append(f"{log.events} events")
    elif log:
        parts.append("no event log for this id")
    for action in step.actions:
        if action.action == Action.METADATA:
            parts.append("metadata: found" if action.found else "metadata: None")
        elif action.action in (Action.LIST, Action.RESUME_MOST_RECENT):
            parts.append(f"listed {len(action.listed or ())}")
        elif action.action == Action.DISCOVER:
            parts.append(f"registry lists {len(action.registered or ())}")
        elif action.action == Action.RESUME and action.shown is not None:  # in the chat's page
            parts.append(f"the page showed {action.shown} message(s)")
    if step.store_cost is not None:
        parts.append(step.store_cost.words())
    if log and log.last_reply and any(f.action == Action.ASK for f in step.failures):
        parts.append("the log holds a reply the app never got")
    for failure in step.failures:
        parts.append(f"{failure.action} failed")
    if step.problems:
        parts.append(f"{len(step.problems)} line(s) not in the protocol")
    return "; ".join(parts) or DASH


TIMED = "*"  # after a verdict that rested on a time-out; the note under the table says how


def verdict(judged: TurnJudgement) -> str:
    """The verdict, marked when it rested on a time-out."""
    return bare_verdict(judged) + (TIMED if judged.verdict and judged.timed else "")


def bare_verdict(judged: TurnJudgement) -> str:
    return judged.verdict.value if judged.verdict else ""


def timed_note(judged: TurnJudgement) -> str:
    """Under a table: what a verdict marked with TIMED rested on."""
    where = f"{judged.scenario} turn {turn_number(judged)}" + (f" ({judged.step.step})" if judged.step else "")
    return f"{TIMED} {where}: {judged.verdict.value} rested on a time-out: {judged.timed}."


def evidence(judged: TurnJudgement) -> str:
    return judged.evidence.value if judged.evidence else ""


def expected(judged: TurnJudgement) -> str:
    return ", ".join(e.wanted for e in judged.expectations if e.wanted)


def match(judged: TurnJudgement) -> str:
    if not judged.expectations:
        return ""
    return {True: "yes", False: "NO", None: "?"}[judged.as_expected]


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else ('es' if noun.endswith('s') else 's')}"


def recovery(found: Recovery) -> str:
    if found.seconds is None:
        return f"{found.kind} in step {found.step} healed; no resume succeeded after it"
    return f"{found.kind} in step {found.step} healed; the session resumed {found.seconds:.2f} s later"
