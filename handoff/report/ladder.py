"""The report's summary picture: the ladder, its rungs grouped by what each tests (the
conditions of report/summary.py — same process, new process, new machine, ... — in the
order it gives them; ladder order within each), each rung with a chip per question (its
verdict, as a symbol and a word), whether it came out as its scenario expects, and beside
it what it proves and does not prove, in short. Pure layout, like diagram.py; the
template draws it."""

from __future__ import annotations

from dataclasses import dataclass

from handoff.checker.verdicts import RunJudgement, ScenarioJudgement
from handoff.report import summary, terminal
from handoff.report.diagram import WIDTH
from handoff.report.outcomes import Standing, judged_turns, standing
from handoff.report.typeset import Line, text_px, text_width, wrap
from handoff.scenario import Scenario
from handoff.words import Verdict

# A symbol beside each word, so that a verdict never rests on colour alone.
SYMBOLS = {Verdict.KEPT: "✓", Verdict.LOST: "✗", Verdict.REFUSED: "⊘", Verdict.UNKNOWN: "?", Verdict.NO_PROVIDER: "∅",
           Verdict.UNDELIVERED: "↯", Verdict.FAILED_LOUDLY: "⚠", Verdict.LOST_SILENTLY: "⊖", Verdict.SKIPPED: "–",
           Verdict.CRASHED: "!"}
TOP = 8
GROUP = 32  # a condition's heading
LINE = 13  # a line of what a rung proves (11 px)
RAILS = (14.0, 38.0)
CHIP_GAP = 6.0
CHIP_PADDING = 7.0
MEANING_ROOM = 280.0  # px: with less room than this beside the chips, what a rung proves goes under them
MARGIN = 12.0


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
    condition: str  # what it tests: one of summary.CONDITIONS' names ("" when its scenario is not known)
    meaning_x: float
    # "proves ..." and "does not prove ...", each wrapped (its lines and their baselines);
    # the words "proves" and "does not prove" are of class "key"
    meaning: tuple[Statement, ...]


@dataclass(frozen=True)
class Statement:
    lines: tuple[Line, ...]
    ys: tuple[float, ...]


@dataclass(frozen=True)
class Group:
    condition: str
    y: float  # the top of its heading
    rungs: int


@dataclass(frozen=True)
class Ladder:
    width: float
    height: float
    name_x: float
    groups: tuple[Group, ...]
    rungs: tuple[Rung, ...]


def grouped(judgement: RunJudgement, scenarios: dict[str, Scenario]) -> list[tuple[str, list[ScenarioJudgement]]]:
    """The rungs by what they test (summary.condition), in the order of summary.CONDITIONS,
    ladder order within each; a rung whose scenario is not known comes last, under ""."""
    found: dict[str, list[ScenarioJudgement]] = {}
    for judged in judgement.scenarios:
        known = scenarios.get(judged.name)
        found.setdefault(summary.condition(known) if known else "", []).append(judged)
    order = [name for name, _, _ in summary.CONDITIONS]
    return sorted(found.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order))


def meaning(judged: ScenarioJudgement, scenario: Scenario | None) -> tuple[str, str]:
    """What a rung proves and does not, in short: its file's ``proves_in_short`` and
    ``does_not_prove_in_short``, else the first clause of its full texts (as the terminal's
    rung lines say it)."""
    proves = scenario.proves_in_short if scenario else ""
    not_proved = scenario.does_not_prove_in_short if scenario else ""
    return (proves or terminal._lower_first(terminal._first_clause(judged.proves)),
            not_proved or terminal._lower_first(terminal._first_clause(judged.does_not_prove)))


def ladder(judgement: RunJudgement, scenarios: dict[str, Scenario] | None = None, width: float = WIDTH) -> Ladder:
    scenarios = scenarios or {}
    groups = grouped(judgement, scenarios)
    name_x = RAILS[1] + 12
    names_end = round(name_x + max([text_px(s.name, "bold") for s in judgement.scenarios] or [0]) + 16, 1)
    placed = []  # (judged, chips, standing, standing_x), in the groups' order
    meaning_x = names_end
    for _, rungs in groups:
        for judged in rungs:
            x, chips = names_end, []
            for turn in judged_turns(judged):
                verdict = turn.verdict.value if turn.verdict else Verdict.UNKNOWN.value
                text = f"{SYMBOLS.get(verdict, '?')} {verdict}"
                chip = round(text_px(text) + 2 * CHIP_PADDING, 1)
                where = f"turn {turn.turn if turn.turn is not None else '—'} ({turn.step.step})" if turn.step else \
                    "scenario"
                chips.append(Chip(verdict, SYMBOLS.get(verdict, "?"), x, chip, turn.as_expected, where))
                x = round(x + chip + CHIP_GAP, 1)
            state = standing(judged)
            placed.append((judged, tuple(chips), state, x + 8))
            meaning_x = max(meaning_x, round(x + 8 + text_px(state.value, "bold") + 24, 1))
    beside = width - MARGIN - meaning_x >= MEANING_ROOM
    if not beside:  # under the chips, from the name on
        meaning_x = name_x
    room = width - MARGIN - meaning_x

    out_groups, out_rungs, y = [], [], float(TOP)
    rungs_in_order = iter(placed)
    for condition, rungs in groups:
        if condition:
            out_groups.append(Group(condition, y, len(rungs)))
            y += GROUP
        for _ in rungs:
            judged, chips, state, standing_x = next(rungs_in_order)
            proves, not_proved = meaning(judged, scenarios.get(judged.name))
            line = y + 16  # the rung's line
            baseline = line - 2 if beside else line + 20
            statements = []
            for key, text in (("proves ", proves), ("does not prove ", not_proved)):
                lines = wrap(((key, "key"), (text, "")), room, "small")
                statements.append(Statement(lines, tuple(baseline + LINE * i for i in range(len(lines)))))
                baseline += LINE * len(lines)
            out_rungs.append(Rung(judged.name, line, chips, state, standing_x, condition, meaning_x, tuple(statements)))
            y = max(line + 14, baseline - LINE + 4) + 6
    right = max([r.standing_x + text_px(r.standing.value, "bold") for r in out_rungs] +
                [r.meaning_x + text_width(line, "small") for r in out_rungs for s in r.meaning for line in s.lines] +
                [names_end])
    return Ladder(round(right + MARGIN, 1), y + TOP, name_x, tuple(out_groups), tuple(out_rungs))
