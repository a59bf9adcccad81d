"""The report's summary picture: the ladder, one rung per scenario in ladder order, each
with a chip per question (its verdict, as a symbol and a word) and whether the rung came
out as its scenario expects. Pure layout, like diagram.py; the template draws it."""

from __future__ import annotations

from dataclasses import dataclass

from handoff.checker.verdicts import RunJudgement
from handoff.report.diagram import CHARACTER, TITLE_CHARACTER
from handoff.report.outcomes import Standing, judged_turns, standing

# A symbol beside each word, so that a verdict never rests on colour alone.
SYMBOLS = {"kept": "✓", "lost": "✗", "refused": "⊘", "unknown": "?", "no-provider": "∅", "undelivered": "↯",
           "failed-loudly": "⚠", "lost-silently": "⊖", "skipped": "–", "crashed": "!"}
ROW = 28
TOP = 12
RAILS = (14.0, 38.0)
CHIP_GAP = 6.0
CHIP_PADDING = 7.0


@dataclass(frozen=True)
class Chip:
    verdict: str
    symbol: str
    x: float
    width: float
    as_expected: bool | None
    turn: str  # "turn 2 (B)"

    @property
    def text(self) -> str:
        return f"{self.symbol} {self.verdict}"


@dataclass(frozen=True)
class Rung:
    name: str
    y: float  # the rung's line; its texts sit on it
    chips: tuple[Chip, ...]
    standing: Standing
    standing_x: float


@dataclass(frozen=True)
class Ladder:
    width: float
    height: float
    name_x: float
    rungs: tuple[Rung, ...]


def ladder(judgement: RunJudgement) -> Ladder:
    name_x = RAILS[1] + 12
    names_end = name_x + max([len(s.name) for s in judgement.scenarios] or [0]) * TITLE_CHARACTER + 16
    rungs, right = [], names_end
    for index, scenario in enumerate(judgement.scenarios):
        x, chips = names_end, []
        for turn in judged_turns(scenario):
            verdict = turn.verdict.value if turn.verdict else "unknown"
            text = f"{SYMBOLS.get(verdict, '?')} {verdict}"
            width = len(text) * CHARACTER + 2 * CHIP_PADDING
            where = f"turn {turn.turn if turn.turn is not None else '—'} ({turn.step.step})" if turn.step else "scenario"
            chips.append(Chip(verdict, SYMBOLS.get(verdict, "?"), x, width, turn.as_expected, where))
            x += width + CHIP_GAP
        state = standing(scenario)
        standing_x = x + 8
        right = max(right, standing_x + len(state.value) * TITLE_CHARACTER)
        rungs.append(Rung(scenario.name, TOP + ROW * (index + 0.5), tuple(chips), state, standing_x))
    return Ladder(right + 12, TOP * 2 + ROW * len(rungs), name_x, tuple(rungs))
