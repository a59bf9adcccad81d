"""A judged run in each of its forms: the terminal's table, Markdown, JSON and the HTML
page (html.py), as `handoff run`, `report` and `lab` print or write them. A version grid
(a skew run) reads as a grid (skew_grid.py)."""

from __future__ import annotations

import msgspec

from handoff.checker.verdicts import RunJudgement
from handoff.report import skew_grid, terminal
from handoff.report.redact import for_display
from handoff.runs.record import RunRecord
from handoff.words import Command

FORMATS = ("table", "markdown", "json", "html")


def render(record: RunRecord, judgement: RunJudgement, wide: bool = False) -> str:
    """The terminal output of a run: the plan, the table, what each rung proved, the summary."""
    return terminal.render(record, judgement, wide)


def _markdown_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _markdown_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    headers = [" ".join(h.split()) for h in headers]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return lines + ["| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in rows]


def markdown(record: RunRecord, judgement: RunJudgement, wide: bool = False) -> str:
    """The same as the terminal output, for pasting into an issue or a document."""
    record, judgement = for_display(record, judgement)
    fact, *plan = terminal.plan_of(record).split("\n")
    lines = [f"**{_markdown_cell(fact)}**", "", _markdown_cell(" ".join(plan)), ""]
    if wide:
        lines += _markdown_table(terminal.WIDE_HEADERS, terminal.wide_rows(judgement))
        lines.append("")
        for scenario in judgement.scenarios:
            explained = terminal.explained(scenario)
            lines.append(f"- **{_markdown_cell(explained[0])}**")
            lines += [f"  - {_markdown_cell(line)}" for line in explained[1:]]
    else:
        lines += _markdown_table(terminal.TURN_HEADERS, terminal.turn_rows(judgement, record.versions.machine))
        lines.append("")
        lines += [f"- {_markdown_cell(line)}" for line in terminal.rung_lines(record, judgement)]
    lines += ["", " ".join(terminal.summary(judgement).split())]
    return "\n".join(lines)


def as_json(record: RunRecord, judgement: RunJudgement) -> bytes:
    """Everything: what was observed (the record) and what the checker made of it, with
    each turn's ``as_expected`` and the run's ``exit_code`` spelled out. A step's facts
    are written once, under its scenario's ``steps``, and each turn names its step (a
    copy in every turn grew with turns times facts: 2 GB for a 319 KB run). An id that
    carries a secret is redacted here too: the stored run.json is the raw record."""
    record, judgement = for_display(record, judgement)
    judged = msgspec.to_builtins(judgement)
    for scenario, data in zip(judgement.scenarios, judged["scenarios"]):
        data["steps"] = {}
        for turn, turn_data in zip(scenario.turns, data["turns"]):
            turn_data["as_expected"] = turn.as_expected
            if turn.step is not None:
                data["steps"].setdefault(turn.step.step, turn_data["step"])
                turn_data["step"] = turn.step.step
    judged["exit_code"] = int(judgement.exit_code())
    return msgspec.json.format(msgspec.json.encode({"record": record, "judgement": judged}), indent=2)


def rendered(record: RunRecord, judgement: RunJudgement, form: str, wide: bool = False) -> str:
    record, judgement = for_display(record, judgement)
    if record.command == Command.SKEW and form in ("table", "markdown"):  # a version grid reads as a grid
        return skew_grid.markdown(record, judgement) if form == "markdown" else skew_grid.render(record, judgement)
    if form == "markdown":
        return markdown(record, judgement, wide)
    if form == "json":
        return as_json(record, judgement).decode()
    if form == "html":
        from handoff.report.html import page  # Jinja2 loads only when a page is made

        return page(record, judgement)
    return render(record, judgement, wide)
