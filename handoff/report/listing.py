"""`handoff runs`: one line per stored run, judged with this version's checker."""

from __future__ import annotations

from pathlib import Path

from handoff.checker.checks import judge
from handoff.errors import UserError
from handoff.guard.ids import redacted
from handoff.report import fit
from handoff.runs.store import RUNS_DIR, load_at, run_ids
from handoff.words import Command


def runs_table(limit: int, root: Path = RUNS_DIR) -> str:
    """One row a run: its id (which says when it started, in UTC), what ran, how its turns
    came out, on which versions; the width of the terminal at most."""
    ids = run_ids(root)[-limit:]
    if not ids:
        return f"no stored runs in {root}: `handoff run` stores one each time it runs"
    body = []
    for run_id in ids:
        try:
            record = load_at(root / run_id, run_id).record  # the row's own directory, never looked up again
        except UserError as error:
            body.append([run_id, str(error), "", "", "", ""])
            continue
        judgement = judge(record)
        held = sum(1 for turn in judgement.judged if turn.as_expected)
        body.append([run_id, _what_ran(record), held, len(judgement.contradicted), len(judgement.unjudged),
                     f"{record.versions.sdk} / {record.versions.runtime}"])
    return fit.table(body, ["run", "what ran", "held", "not", "unjudged", "SDK / runtime"], wraps=(1, 5))


def _what_ran(record) -> str:
    """The scenarios; for a lab run, which session it made and the fact it told, so one
    lab run can be told from the next."""
    path = f" ({record.options.backend.path})"  # the Copilot API or BYOK: what its verdicts teach differs
    if record.command == Command.LAB:
        ids = [step.session_id for s in record.scenarios for step in s.steps if step.session_id]
        return f"lab: session {redacted(ids[0]) if ids else '?'}, fact {record.options.fact!r}{path}"
    names = [s.name for s in record.scenarios]
    shown = (", ".join(names) if len(names) <= 3 else f"{len(names)} scenarios") + path
    return shown if record.command == Command.RUN else f"{record.command}: {shown}"
