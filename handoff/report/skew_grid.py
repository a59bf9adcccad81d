"""A `handoff skew` run as a grid: created-by rows × resumed-by columns, one verdict a cell.

Rendered from the run's record (which cell is which pair of versions: the scenarios as
they were stored) and its judgement (each cell's verdict and evidence), so `handoff
report` prints a stored grid exactly as `handoff skew` printed it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from handoff.checker.verdicts import RunJudgement, ScenarioJudgement, TurnJudgement
from handoff.report import cells, fit
from handoff.report.outcomes import Standing, standing, what_went_wrong
from handoff.runs.history import RunHistory
from handoff.runs.record import RunRecord
from handoff.skew.expected import Pair
from handoff.skew.grid import pairs_of
from handoff.versions import key, sdk_key
from handoff.words import NoTurn, TurnKind

LEGEND = ("Rows: the runtime/SDK that created the session, told the fact and closed it; columns: the runtime/SDK of "
          "a new process that resumed it from the same home and asked. Where the column's runtime is newer than the "
          "row's, the resume is an upgrade; where it is older, a downgrade. A cell is the verdict of that question; 7/8: the resume "
          "loaded 7 of the 8 events in the log; NO(kept): not what scenarios/skew/expected.toml expects; "
          "?: could not be judged.")


@dataclass(frozen=True)
class Cell:
    created: Pair
    resumed: Pair
    judged: ScenarioJudgement

    @property
    def question(self) -> TurnJudgement | None:
        return next((t for t in self.judged.turns if t.kind in (TurnKind.ASK, NoTurn.SCENARIO)), None)

    def text(self) -> str:
        turn = self.question
        if turn is None or turn.verdict is None:
            return "?"
        words = [turn.verdict.value]
        if turn.step is not None and turn.step.loaded_all_events is False:
            log = turn.step.eventlog
            words.append(f"{log.resume_event_count}/{log.events_before_resume}")
        if turn.as_expected is False:
            wanted = next((e.wanted for e in turn.expectations if e.name == "verdict"), "")
            words.append(f"NO({wanted})")
        elif turn.as_expected is None and turn.verdict.value != "skipped":
            words.append("?")
        return " ".join(words)


def _cells(record: RunRecord, judgement: RunJudgement) -> list[Cell]:
    return [Cell(*pairs_of(stored.scenario), judged) for stored, judged in zip(record.scenarios, judgement.scenarios)]


def _axis(found: list[Cell]) -> list[Pair]:
    return sorted({c.created for c in found} | {c.resumed for c in found}, key=lambda p: (key(p.runtime), sdk_key(p.sdk)))


def _rows(found: list[Cell]) -> tuple[list[Pair], list[list[str]]]:
    axis = _axis(found)
    by_pair = {(c.created, c.resumed): c for c in found}
    rows = [[pair.label] + [by_pair[(pair, other)].text() if (pair, other) in by_pair else "" for other in axis]
            for pair in axis]
    return axis, rows


def _failures(record: RunRecord, judgement: RunJudgement) -> list[str]:
    """The actions that failed, by the runtime/SDK pair whose process failed them, each
    message once (a session id in it replaced by <id>)."""
    seen: dict[Pair, dict[str, None]] = {}
    for stored, judged in zip(RunHistory.of(record).scenarios, judgement.scenarios):
        created, resumed = pairs_of(stored.record.scenario)
        for pair, step in zip((created, resumed), stored.steps):
            given = step.record.session_id
            for failure in step.said.failures:
                message = re.sub(re.escape(given), "<id>", failure.message) if given else failure.message
                seen.setdefault(pair, {})[f"{failure.action}: {cells.short(message, 240)}"] = None
    return [f"{pair.label}: " + "; ".join(found) for pair, found in sorted(seen.items(), key=lambda i: (key(i[0].runtime), sdk_key(i[0].sdk)))]


def _summary(judgement: RunJudgement) -> str:
    """How many cells came out as expected: a cell is a scenario, whose created step's
    tell may be judged besides its question (a failed-loudly tell on an old runtime)."""
    total = len(judgement.scenarios)
    held = sum(1 for scenario in judgement.scenarios if standing(scenario) == Standing.AS_EXPECTED)
    return f"{cells.plural(total, 'cell')}, {held} as expected" + what_went_wrong(judgement)


def _wrapped(text: str, indent: str = "") -> str:
    """Prose under the grid, within the terminal (cell names hold no space: never cut)."""
    return fit.fill(text, width=fit.terminal_width(), initial_indent=indent, subsequent_indent=indent + "    ",
                    break_on_hyphens=False)


def render(record: RunRecord, judgement: RunJudgement) -> str:
    axis, rows = _rows(_cells(record, judgement))
    headers = ["created by \\ resumed by"] + [pair.label.replace("/", "\n") for pair in axis]
    grid = fit.table(rows, headers, disable_numparse=True)
    failed = _failures(record, judgement)
    parts = [f"Fact to remember: '{judgement.fact}'. Versions are runtime/SDK.", grid, _wrapped(LEGEND)]
    if failed:
        parts.append("Failed actions, by the runtime/SDK of the process that failed them:\n"
                     + "\n".join(_wrapped(line, "  ") for line in failed))
    parts.append(_wrapped(_summary(judgement)))
    return "\n\n".join(parts)


def markdown(record: RunRecord, judgement: RunJudgement) -> str:
    axis, rows = _rows(_cells(record, judgement))
    headers = ["created by ↓ / resumed by →"] + [pair.label for pair in axis]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(f"**{row[0]}**" if i == 0 else cell for i, cell in enumerate(row)) + " |" for row in rows]
    failed = _failures(record, judgement)
    lines += ["", LEGEND]
    if failed:
        lines += ["", "Failed actions, by the runtime/SDK of the process that failed them:", ""]
        lines += [f"- {line}" for line in failed]
    lines += ["", _summary(judgement)]
    return "\n".join(lines)
