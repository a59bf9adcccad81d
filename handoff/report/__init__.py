"""Rendering a judged run: the terminal output (terminal.py), Markdown, JSON and the HTML
report (html.py). Pure functions of the record and its judgement, so a stored run renders
exactly as it did when it ran, and everything here is tested without a runtime."""

from __future__ import annotations

from datetime import datetime

import msgspec
from tabulate import tabulate

from handoff.checker.verdicts import RunJudgement
from handoff.guard.ids import redacted
from handoff.report import cells, skew_grid, terminal
from handoff.report.redact import for_display
from handoff.runs.record import RunRecord
from handoff.words import Command, StoreKind

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
        lines += _markdown_table(terminal.HEADERS, terminal.learner_rows(judgement, record.versions.machine))
        lines.append("")
        lines += [f"- {_markdown_cell(line)}" for line in terminal.rung_lines(record, judgement)]
    lines += ["", " ".join(terminal.summary(judgement).split())]
    return "\n".join(lines)


def as_json(record: RunRecord, judgement: RunJudgement) -> bytes:
    """Everything: what was observed (the record) and what the checker made of it, with
    each turn's ``as_expected`` and the run's ``exit_code`` spelled out. An id that
    carries a secret is redacted here too: the stored run.json is the raw record."""
    record, judgement = for_display(record, judgement)
    judged = msgspec.to_builtins(judgement)
    for scenario, data in zip(judgement.scenarios, judged["scenarios"]):
        for turn, turn_data in zip(scenario.turns, data["turns"]):
            turn_data["as_expected"] = turn.as_expected
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


def _when(seconds: float | None, host: str | None) -> str:
    if seconds is None:
        return cells.DASH
    return f"{datetime.fromtimestamp(seconds).strftime('%Y-%m-%d %H:%M:%S')} on {host}"


def sessions_table(registries: list[tuple[str, list]]) -> str:
    """The registered sessions of a store, by where each is kept: ``""`` for the store's
    own registry, else the schema a run kept (shown as its run and scenario)."""
    if not registries:
        return "no sessions registered"
    kept = any(where for where, _ in registries)
    body = []
    for where, sessions in registries:
        for s in sessions:
            row = [redacted(s.session_id), s.owner, _when(s.created_at, s.created_on),
                   _when(s.last_resumed_at, s.last_resumed_on),
                   _pair(s.created_runtime, s.created_sdk), _pair(s.runtime_version, s.sdk_version), s.turns,
                   (s.summary or "")[:40]]
            body.append(([_kept_by(where)] if kept else []) + row)
    headers = ["id", "owner", "created", "last resumed", "created by", "last written by", "turns", "summary"]
    return tabulate(body, headers=(["kept by"] if kept else []) + headers)


def home_sessions_table(sessions: list) -> str:
    """The sessions a Copilot home holds (handoff/stores/homes.py), as read from their
    event logs."""
    headers = ["id", "created", "last written", "turns", "closed", "created by", "first prompt"]
    body = [[redacted(s.session_id), _at(s.created_at), _at(s.modified_at), s.turns, _home_closed(s),
             _pair(s.created_by, None), cells.short(f"({s.problem})" if s.problem else s.summary, 40)]
            for s in sessions]
    return tabulate(body, headers=headers)


def _home_closed(session) -> str:
    """``yes``: the log ends with a session.shutdown; else what it ends with."""
    if session.closed is None:
        return cells.DASH
    return "yes" if session.closed else f"no (ends with {session.last_event})"


def run_sessions_table(sessions: list) -> str:
    """The sessions a stored run's steps used (handoff/runs/sessions.py), by scenario."""
    headers = ["scenario", "id", "steps", "kept in", "began", "turns", "closed", "first prompt"]
    body = [[s.scenario, redacted(s.session_id), f"{', '.join(s.steps)} ({', '.join(s.hosts)})",
             f"home ({', '.join(s.homes)})" if s.store == StoreKind.HOME else s.store, _at(s.started_at), s.turns,
             cells.yes_no(s.closed), cells.short(s.summary, 40)]
            for s in sessions]
    return tabulate(body, headers=headers)


def _at(seconds: float | None) -> str:
    return cells.DASH if seconds is None else datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


def _kept_by(schema: str) -> str:
    """``handoff_4e8418_cross_process_postgres`` -> ``run …4e8418, cross_process_postgres``."""
    if not schema:
        return "this store"
    tag, _, scenario = schema.removeprefix("handoff_").partition("_")
    return f"run …{tag}, {scenario}"


def _pair(runtime: str | None, sdk: str | None) -> str:
    """Runtime and SDK as the registry recorded them."""
    if not runtime:
        return cells.DASH
    return f"runtime {runtime}" + (f", SDK {sdk}" if sdk else "")
