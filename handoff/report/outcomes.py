"""How a whole scenario came out, in a few words: the words the progress lines, the
terminal's rung lines and the HTML ladder share, so they can never disagree."""

from __future__ import annotations

from enum import StrEnum

from handoff.checker.verdicts import RunJudgement, ScenarioJudgement, TurnJudgement
from handoff.report import cells
from handoff.words import NoTurn, TurnKind, Verdict


class Standing(StrEnum):
    AS_EXPECTED = "as expected"
    CONTRADICTED = "NOT as expected"
    UNJUDGED = "could not be judged"
    SKIPPED = "skipped"
    NOTHING_JUDGED = "nothing to judge"


def judged_turns(scenario: ScenarioJudgement) -> list[TurnJudgement]:
    """The turns a verdict was given to: every ask, a tell that failed loudly or was lost
    silently, and a scenario that was skipped or crashed."""
    return [turn for turn in scenario.turns
            if turn.kind in (TurnKind.ASK, NoTurn.SCENARIO)
            or (turn.kind == TurnKind.TELL and turn.verdict is not None)]


def standing(scenario: ScenarioJudgement) -> Standing:
    if scenario.skipped:
        return Standing.SKIPPED
    turns = judged_turns(scenario)
    if any(turn.as_expected is False for turn in turns):
        return Standing.CONTRADICTED
    if any(turn.verdict in (Verdict.UNKNOWN, Verdict.FAILED_LOUDLY, Verdict.CRASHED) and turn.as_expected is not True
           for turn in turns):
        return Standing.UNJUDGED
    if any(turn.as_expected for turn in turns):
        return Standing.AS_EXPECTED
    return Standing.NOTHING_JUDGED


def verdicts(scenario: ScenarioJudgement) -> str:
    """The verdicts of its judged turns, in order: ``kept``, ``lost, kept``, ``skipped``."""
    words = [turn.verdict.value for turn in judged_turns(scenario) if turn.verdict]
    return ", ".join(words) or "no verdict"


def contradictions(scenario: ScenarioJudgement) -> str:
    """What was not as expected, e.g. ``turn 2 (B): lost, expected kept``."""
    found = []
    for turn in judged_turns(scenario):
        for expectation in turn.expectations:
            if expectation.met is False:
                where = f"turn {turn.turn if turn.turn is not None else '—'} ({turn.step.step})" if turn.step else "it"
                what = "" if expectation.name == "verdict" else f"{expectation.name} "
                found.append(f"{where}: {what}{expectation.got}, expected {expectation.wanted}")
    return "; ".join(found)


def in_words(scenario: ScenarioJudgement) -> str:
    """One phrase for a finished scenario: ``kept, as expected``, ``skipped: <why>``..."""
    state = standing(scenario)
    if state == Standing.SKIPPED:
        return f"skipped: {scenario.skipped}"
    if scenario.crashed:
        return f"crashed: {scenario.crashed}"
    if state == Standing.CONTRADICTED:
        return f"{verdicts(scenario)}: NOT as expected ({contradictions(scenario)})"
    return f"{verdicts(scenario)}, {state.value}"


def what_went_wrong(judgement: RunJudgement) -> str:
    """The end of a run's summary: its silent losses, then which scenarios came out not
    as expected and which could not be judged (empty when none did)."""
    text = ""
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
