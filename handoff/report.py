"""Rendering results: a pure function of the rows, so it can be tested without a runtime."""

from __future__ import annotations

import json
import textwrap
from datetime import datetime
from dataclasses import asdict
from pathlib import Path

from tabulate import tabulate

from handoff.checks import Row
from handoff.results import ScenarioResult

HEADERS = ["scenario", "turn", "ran in", "store", "closed\nbefore\nresume", "answer",
           "fact\nreached\nmodel", "event log", "verdict", "evidence", "expected", "match"]
WIDTHS = [None, None, 16, 10, None, 24, None, 26, None, 8, 10, None]


def _match(row: Row) -> str:
    return "" if row.match is None else ("yes" if row.match else "NO")


def table(rows: list[Row]) -> str:
    body = [
        [r.scenario, f"{r.turn} {r.kind}", r.ran_in, r.store, r.closed_before_resume, r.answer,
         r.fact_reached_model, r.event_log, r.verdict, r.evidence, r.expected, _match(r)]
        for r in rows
    ]
    return tabulate(body, headers=HEADERS, tablefmt="simple", maxcolwidths=WIDTHS)


def _wrapped(text: str) -> str:
    return textwrap.fill(text, width=110, initial_indent="  ", subsequent_indent="      ")


def explanations(results: list[ScenarioResult], rows: list[Row]) -> str:
    lines = []
    for result in results:
        lines.append(f"{result.name} — {result.title} ({result.seconds:.1f} s)")
        if result.skipped_reason:
            lines.append(_wrapped(f"skipped: {result.skipped_reason}"))
        for row in rows:
            if row.scenario == result.name and row.kind == "ask":
                lines.append(_wrapped(f"turn {row.turn} ({row.step}): {row.verdict} — {row.basis}"))
        lines.append(_wrapped(f"proves: {result.proves}"))
        lines.append(_wrapped(f"does not prove: {result.does_not_prove}"))
    return "\n".join(lines)


def summary(rows: list[Row], results: list[ScenarioResult]) -> str:
    judged = [r for r in rows if r.match is not None]
    failed = sorted({r.scenario for r in judged if not r.match})
    text = f"{len(results)} scenarios, {len(judged)} judged turns, {len(judged) - sum(not r.match for r in judged)} as expected"
    if failed:
        text += f"; NOT as expected: {', '.join(failed)}"
    return text


def render(results: list[ScenarioResult], rows: list[Row], fact: str) -> str:
    return "\n\n".join([f"Fact to remember: '{fact}'", table(rows), explanations(results, rows), summary(rows, results)])


def _when(seconds: float | None, host: str | None) -> str:
    if seconds is None:
        return "—"
    return f"{datetime.fromtimestamp(seconds).strftime('%Y-%m-%d %H:%M:%S')} on {host}"


def sessions_table(sessions: list) -> str:
    if not sessions:
        return "no sessions registered"
    body = [[s.session_id, s.owner, _when(s.created_at, s.created_on), _when(s.last_resumed_at, s.last_resumed_on),
             s.runtime_version, s.turns, (s.summary or "")[:40]] for s in sessions]
    return tabulate(body, headers=["id", "owner", "created", "last resumed", "runtime", "turns", "summary"])


def write_json(path: Path, results: list[ScenarioResult], rows: list[Row]) -> None:
    """Write the full results atomically: a reader never sees a half-written file."""
    payload = {"results": [asdict(r) for r in results], "rows": [asdict(r) for r in rows]}
    temporary = path.with_name(path.name + ".partial")
    temporary.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    temporary.replace(path)
