"""Rendering a judged run: the terminal table, Markdown, JSON. Pure functions of the
judgement (and, for JSON, the record), so a stored run renders exactly as it did when it
ran, and everything here is tested without a runtime."""

from __future__ import annotations

import textwrap
from datetime import datetime

import msgspec
from tabulate import tabulate

from handoff.checker.verdicts import RunJudgement, ScenarioJudgement
from handoff.report import cells
from handoff.runs.record import RunRecord

FORMATS = ("table", "markdown", "json")

HEADERS = ["scenario", "turn", "ran in", "store", "closed\nbefore\nresume", "answer",
           "fact\nreached\nmodel", "event log", "verdict", "evidence", "expected", "match"]
WIDTHS = [None, None, 16, 10, None, 24, None, 26, None, 8, 10, None]
COLUMNS = (cells.turn, lambda t: cells.ran_in(t.step), lambda t: cells.store(t.step), cells.closed_before_resume,
           cells.answer, cells.fact_reached_model, cells.event_log, cells.verdict, cells.evidence, cells.expected,
           cells.match)


def _rows(judgement: RunJudgement) -> list[list[str]]:
    return [[turn.scenario, *(column(turn) for column in COLUMNS)] for turn in judgement.turns]


def table(judgement: RunJudgement) -> str:
    return tabulate(_rows(judgement), headers=HEADERS, tablefmt="simple", maxcolwidths=WIDTHS)


def _wrapped(text: str) -> str:
    return textwrap.fill(text, width=110, initial_indent="  ", subsequent_indent="      ")


def _explained(scenario: ScenarioJudgement) -> list[str]:
    lines = [f"{scenario.name} — {scenario.title} ({scenario.seconds:.1f} s)"]
    if scenario.skipped:
        lines.append(_wrapped(f"skipped: {scenario.skipped}"))
    if scenario.crashed:
        lines.append(_wrapped(f"crashed: {scenario.crashed}"))
    for turn in scenario.turns:
        if turn.kind in ("ask", "tell") and turn.verdict is not None:
            number = turn.turn if turn.turn is not None else cells.DASH
            lines.append(_wrapped(f"turn {number} ({turn.step.step}): {turn.verdict.value} — {turn.reason}"))
    for recovery in scenario.recoveries:
        lines.append(_wrapped(cells.recovery(recovery)))
    lines.append(_wrapped(f"proves: {scenario.proves}"))
    lines.append(_wrapped(f"does not prove: {scenario.does_not_prove}"))
    return lines


def explanations(judgement: RunJudgement) -> str:
    return "\n".join(line for scenario in judgement.scenarios for line in _explained(scenario))


def summary(judgement: RunJudgement) -> str:
    judged = judgement.judged
    held = sum(1 for turn in judged if turn.as_expected)
    text = (f"{cells.plural(len(judgement.scenarios), 'scenario')}, {cells.plural(len(judged), 'judged turn')}, "
            f"{held} as expected")
    losses = judgement.silent_losses
    if losses:
        declared = sum(1 for turn in losses if turn.as_expected)
        text += f"; {cells.plural(len(losses), 'silent loss')} ({declared} declared by their scenario)"
    contradicted = sorted({turn.scenario for turn in judgement.contradicted})
    if contradicted:
        text += f"; NOT as expected: {', '.join(contradicted)}"
    unjudged = sorted({turn.scenario for turn in judgement.unjudged})
    if unjudged:
        text += f"; could not be judged: {', '.join(unjudged)}"
    return text


def render(judgement: RunJudgement) -> str:
    """The terminal output of a run: the fact, the table, what each scenario proves, the summary."""
    return "\n\n".join([f"Fact to remember: '{judgement.fact}'", table(judgement), explanations(judgement),
                        summary(judgement)])


def _markdown_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown(judgement: RunJudgement) -> str:
    headers = [" ".join(h.split()) for h in HEADERS]
    lines = [f"**Fact to remember:** '{_markdown_cell(judgement.fact)}'", "",
             "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in _rows(judgement)]
    lines.append("")
    for scenario in judgement.scenarios:
        explained = _explained(scenario)
        lines.append(f"- **{_markdown_cell(explained[0])}**")
        lines += [f"  - {_markdown_cell(line)}" for line in explained[1:]]
    lines += ["", summary(judgement)]
    return "\n".join(lines)


def as_json(record: RunRecord, judgement: RunJudgement) -> bytes:
    """Everything: what was observed (the record) and what the checker made of it, with
    each turn's ``as_expected`` and the run's ``exit_code`` spelled out."""
    judged = msgspec.to_builtins(judgement)
    for scenario, data in zip(judgement.scenarios, judged["scenarios"]):
        for turn, turn_data in zip(scenario.turns, data["turns"]):
            turn_data["as_expected"] = turn.as_expected
    judged["exit_code"] = int(judgement.exit_code())
    return msgspec.json.format(msgspec.json.encode({"record": record, "judgement": judged}), indent=2)


def rendered(record: RunRecord, judgement: RunJudgement, form: str) -> str:
    if form == "markdown":
        return markdown(judgement)
    if form == "json":
        return as_json(record, judgement).decode()
    return render(judgement)


def _when(seconds: float | None, host: str | None) -> str:
    if seconds is None:
        return cells.DASH
    return f"{datetime.fromtimestamp(seconds).strftime('%Y-%m-%d %H:%M:%S')} on {host}"


def sessions_table(sessions: list) -> str:
    if not sessions:
        return "no sessions registered"
    body = [[s.session_id, s.owner, _when(s.created_at, s.created_on), _when(s.last_resumed_at, s.last_resumed_on),
             s.runtime_version, s.turns, (s.summary or "")[:40]] for s in sessions]
    return tabulate(body, headers=["id", "owner", "created", "last resumed", "runtime", "turns", "summary"])
