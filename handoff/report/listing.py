"""`handoff runs`: one line per stored run, judged with this version's checker."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tabulate import tabulate

from handoff.checker.checks import judge
from handoff.errors import UserError
from handoff.runs.store import RUNS_DIR, load, run_ids
from handoff.words import Command


def runs_table(limit: int, root: Path = RUNS_DIR) -> str:
    ids = run_ids(root)[-limit:]
    if not ids:
        return f"no stored runs in {root}: `handoff run` stores one each time it runs"
    body = []
    for run_id in ids:
        try:
            record = load(run_id, root).record
        except UserError as error:
            body.append([run_id, "", "", "", "", "", "", str(error)])
            continue
        judgement = judge(record)
        held = sum(1 for turn in judgement.judged if turn.as_expected)
        when = datetime.fromtimestamp(record.started_at).strftime("%Y-%m-%d %H:%M")
        shown = _what_ran(record)
        body.append([run_id, when, record.command, shown, held, len(judgement.contradicted),
                     len(judgement.unjudged), f"SDK {record.versions.sdk} / runtime {record.versions.runtime}"])
    headers = ["run", "started", "kind", "what ran", "as expected", "not", "unjudged", "versions"]
    return tabulate(body, headers=headers)


def _what_ran(record) -> str:
    """The scenarios; for a lab run, which session it made and the fact it told, so one
    lab run can be told from the next."""
    if record.command == Command.LAB:
        ids = [step.session_id for s in record.scenarios for step in s.steps if step.session_id]
        return f"session {ids[0] if ids else '?'}, fact {record.options.fact!r}"
    names = [s.name for s in record.scenarios]
    return ", ".join(names) if len(names) <= 3 else f"{len(names)} scenarios"
