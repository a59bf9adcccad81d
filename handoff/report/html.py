"""The HTML report: one self-contained page (inline CSS and SVG, nothing fetched) made
from a stored run and its judgement with Jinja2 templates (templates/).

The page has the ladder as a picture, the versions, machine and date, and per scenario
(grouped by what each tests, as the ladder is) its sequence diagram (sequence.py says
what happened, diagram.py where it goes), its verdicts with what they rest on, what it
proves and does not, and behind each question the evidence: the conversation the model
was sent (the fact marked where the witness found it), the event log's facts and the
worker's errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from jinja2 import Environment, PackageLoader, StrictUndefined

from handoff.checker.verdicts import RunJudgement, ScenarioJudgement, TurnJudgement
from handoff.report import cells, summary, terminal
from handoff.report.diagram import Diagram, layout
from handoff.report.ladder import SYMBOLS, grouped, ladder
from handoff.report.outcomes import in_words, standing
from handoff.report.redact import for_display
from handoff.report.sequence import sequence
from handoff.runs.history import RunHistory, ScenarioHistory, StepHistory
from handoff.runs.record import RunRecord
from handoff.witness.evidence import Evidence
from handoff.words import Command, FactPlace, TurnKind

# Where the witness found the fact in a request, in words (FactPlace); the last two are not
# the session's history, so a kept answer does not rest on them.
PLACES = {FactPlace.USER: "the user's own message", FactPlace.TOOL: "a tool's result",
          FactPlace.SUMMARY: "a compaction summary", FactPlace.ASSISTANT: "the model's earlier answer",
          FactPlace.SYSTEM: "a system message (not the history)",
          FactPlace.INJECTED: "text the runtime put into a user message (not the history)"}


@dataclass(frozen=True)
class Said:
    """One message of a conversation the model was sent, cut where it states the fact."""

    role: str
    parts: tuple[tuple[str, bool], ...]  # (text, is the stated fact)


@dataclass(frozen=True)
class Request:
    evidence: Evidence
    conversation: tuple[Said, ...]


@dataclass(frozen=True)
class Question:
    turn: TurnJudgement
    where: str  # "turn 2 (B)"
    requests: tuple[Request, ...]
    eventlog: tuple[tuple[str, str], ...]
    errors: tuple[str, ...]


@dataclass(frozen=True)
class ScenarioView:
    judged: ScenarioJudgement
    anchor: str
    standing: str
    words: str
    diagram: Diagram | None
    questions: tuple[Question, ...]


def marked(text: str, stated: str) -> tuple[tuple[str, bool], ...]:
    """``text`` in pieces, each occurrence of the stated fact its own piece: the witness
    counts the fact as sent when exactly this text is in a message."""
    pieces = text.split(stated) if stated else [text]
    out: list[tuple[str, bool]] = []
    for index, piece in enumerate(pieces):
        if index:
            out.append((stated, True))
        if piece:
            out.append((piece, False))
    return tuple(out)


def _eventlog(step: StepHistory) -> tuple[tuple[str, str], ...]:
    log = step.said.eventlog
    if log is None:
        return (("event log", "not reported (the worker did not finish)"),)
    if not log.found:
        return (("event log", f"no events.jsonl for {log.session_id}"),)
    return (("events", str(log.events)), ("session.start roots", str(log.starts)), ("resumes", str(log.resumes)),
            ("closed before the last resume", cells.yes_no(log.closed_before_resume)),
            ("events the last resume loaded", cells.DASH if log.resume_event_count is None else str(log.resume_event_count)),
            ("alreadyInUse", cells.yes_no(log.already_in_use)), ("forks", str(log.branch_points)),
            ("torn lines", str(log.unreadable_lines)))


def _errors(step: StepHistory) -> tuple[str, ...]:
    view, record = step.said, step.record
    found = [f"{e.action}{' (refused by the guard)' if e.refused else ''}: {e.message}" for e in view.failures]
    found += view.problems + list(record.notes)
    if view.finished is None and not view.killed_on_purpose and record.stderr_tail.strip():
        found.append("stderr: " + record.stderr_tail.strip().splitlines()[-1])
    return tuple(found)


def _questions(history: ScenarioHistory, judged: ScenarioJudgement) -> tuple[Question, ...]:
    """Each question with what the witness saw of it (the judgement numbers turns across the
    scenario; the witness, within the step)."""
    stated = history.fact.stated_text
    questions = []
    for turn in judged.turns:
        if turn.kind != TurnKind.ASK or turn.step is None:
            continue
        step = history.step(turn.step.step)
        seen = () if turn.turn is None else step.requests.get(step.in_step(turn.turn), ())
        requests = tuple(Request(e, tuple(Said(role, marked(text, stated)) for role, text in e.conversation))
                         for e in seen)
        questions.append(Question(turn, f"turn {cells.turn_number(turn)} ({step.name})", requests, _eventlog(step),
                                  _errors(step)))
    return tuple(questions)


def scenario_views(history: RunHistory, judgement: RunJudgement) -> list[tuple[str, list[ScenarioView]]]:
    """Each scenario's section, grouped by what it tests, in the ladder's order."""
    record = history.record
    coordinated = record.command != Command.LAB
    scenarios = {s.record.name: s for s in history.scenarios}
    groups = []
    for condition, rungs in grouped(judgement, {s.name: s.scenario for s in record.scenarios}):
        views = []
        for judged in rungs:
            scenario = scenarios[judged.name]
            drawn = None
            if scenario.record.steps:
                drawn = layout(sequence(scenario, record.options.backend, coordinated))
            views.append(ScenarioView(judged, f"scenario-{judged.name}", standing(judged).value, in_words(judged),
                                      drawn, _questions(scenario, judged)))
        groups.append((condition, views))
    return groups


def _environment() -> Environment:
    return Environment(loader=PackageLoader("handoff.report", "templates"), autoescape=True, trim_blocks=True,
                       lstrip_blocks=True, undefined=StrictUndefined)


def page(record: RunRecord, judgement: RunJudgement) -> str:
    record, judgement = for_display(record, judgement)  # an id carrying a secret shows redacted
    history = RunHistory.of(record)
    started = datetime.fromtimestamp(record.started_at, timezone.utc)
    return _environment().get_template("report.html.j2").render(
        record=record, judgement=judgement, scenarios=scenario_views(history, judgement),
        ladder=ladder(judgement, {s.name: s.scenario for s in record.scenarios}),
        plan=terminal.plan_of(record).split("\n"), summary=" ".join(terminal.summary(judgement).split()),
        started=started.strftime("%Y-%m-%d %H:%M:%S UTC"), seconds=record.finished_at - record.started_at,
        exit_code=int(judgement.exit_code()), symbols=SYMBOLS, fact=history.fact.value, places=PLACES,
        proved=_proved(record, judgement),
    )


def _proved(record: RunRecord, judgement: RunJudgement) -> tuple[str, list[summary.Line]] | None:
    """The one-screen answer (report/summary.py), as the terminal prints it above its table."""
    if record.command != Command.RUN or len(judgement.scenarios) < 2:
        return None
    found = summary.lines(judgement, {s.name: s.scenario for s in record.scenarios})
    return summary.headline(judgement, found), found
