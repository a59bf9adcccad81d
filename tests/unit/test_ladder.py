"""The HTML report's ladder (handoff/report/ladder.py), pure layout to a tenth of a pixel:
a rung per scenario with a chip per judged turn and the rung's standing; every verdict has
its symbol, each chip says which turn it is, nothing overlaps and everything fits."""

from __future__ import annotations

from dataclasses import replace

import pytest

from handoff.checker.verdicts import Expectation, RunJudgement, ScenarioJudgement, TurnJudgement
from handoff.report.ladder import CHIP_GAP, CHIP_PADDING, RAILS, SYMBOLS, ladder
from handoff.report.outcomes import Standing
from handoff.report.typeset import text_px
from handoff.scenario import Scenario, Step
from handoff.words import Verdict
from tests.unit.test_checker_paths import facts


def ask(verdict: Verdict | None, number: int | None = 2, met: bool | None = True, step=facts("B")) -> TurnJudgement:
    return TurnJudgement("s", "ask", number, step, verdict=verdict,
                         expectations=(Expectation("verdict", "kept", verdict.value if verdict else "", met),))


SKIPPED = TurnJudgement("s", "scenario", None, None, verdict=Verdict.SKIPPED)


def run(*scenarios: tuple[str, tuple[TurnJudgement, ...]]) -> RunJudgement:
    return RunJudgement("r", "v", tuple(
        ScenarioJudgement(name, "T", "It proves this.", "Not that.", 1.0, turns,
                          skipped="no sshd" if SKIPPED in turns else None)
        for name, turns in scenarios))


def test_every_verdict_has_a_symbol_of_one_character():
    """So that a verdict never rests on colour alone, and a chip is as wide as its word
    and one symbol."""
    assert set(SYMBOLS) == {verdict.value for verdict in Verdict}
    assert all(len(symbol) == 1 for symbol in SYMBOLS.values())


def test_each_rung_has_its_chips_and_standing_and_nothing_overlaps_or_spills():
    drawn = ladder(run(("a-long-scenario-name", (ask(Verdict.KEPT), ask(Verdict.LOST, 3, False))),
                       ("short", (ask(Verdict.UNDELIVERED, met=None),)), ("far", (SKIPPED,))))
    assert [(r.name, [c.text for c in r.chips], r.standing) for r in drawn.rungs] == [
        ("a-long-scenario-name", ["✓ kept", "✗ lost"], Standing.CONTRADICTED),
        ("short", ["↯ undelivered"], Standing.NOTHING_JUDGED),
        ("far", ["– skipped"], Standing.SKIPPED)]
    assert [[c.as_expected for c in r.chips] for r in drawn.rungs] == [[True, False], [None], [None]]
    longest = text_px("a-long-scenario-name", "bold")
    assert drawn.name_x > RAILS[1]
    for rung in drawn.rungs:
        assert rung.chips[0].x >= drawn.name_x + longest  # past every name
        for chip in rung.chips:
            assert chip.width == pytest.approx(text_px(chip.text) + 2 * CHIP_PADDING, abs=0.06)
        for left, right in zip(rung.chips, rung.chips[1:]):
            assert left.x + left.width + CHIP_GAP == pytest.approx(right.x, abs=0.11)
        assert rung.chips[-1].x + rung.chips[-1].width < rung.standing_x
        assert rung.standing_x + text_px(rung.standing.value, "bold") < drawn.width
    assert all(upper.y < lower.y for upper, lower in zip(drawn.rungs, drawn.rungs[1:]))
    assert drawn.rungs[-1].y < drawn.height


@pytest.mark.parametrize("turn, where", [
    (ask(Verdict.KEPT), "turn 2 (B)"),
    (ask(Verdict.REFUSED, number=None), "turn — (B)"),  # a question that never happened has no number
    (SKIPPED, "scenario"),
])
def test_a_chip_says_which_turn_it_is(turn, where):
    [chip] = ladder(run(("s", (turn,)))).rungs[0].chips
    assert chip.turn == where


def test_a_question_without_a_verdict_shows_as_unknown():
    [chip] = ladder(run(("s", (replace(ask(None), expectations=()),)))).rungs[0].chips
    assert (chip.text, chip.width) == ("? unknown", pytest.approx(text_px("? unknown") + 2 * CHIP_PADDING, abs=0.06))


# --- the picture, to a tenth of a pixel ------------------------------------------------------
# Names start 12 px right of the rails (38 + 12 = 50); chips 16 px past the widest name in
# bold, each its text's width plus 7 px a side, 6 px apart; the standing 8 px after the
# last chip; what a rung proves 24 px past the widest standing, or, with less than 280 px
# left there, under the chips from the name on (20 px below the rung's line), 13 px a line;
# a group's heading takes 32 px, a rung 16 px to its line; 12 px spare at the right and 8 at
# the top and bottom. A change to any of these numbers is a change to the picture: make it
# here too, on purpose.

def geometry(drawn) -> tuple:
    return (drawn.width, drawn.height, drawn.name_x, tuple((g.condition, g.y, g.rungs) for g in drawn.groups),
            tuple((r.name, r.y, tuple((c.x, c.width) for c in r.chips), r.standing_x, r.meaning_x,
                   tuple((s.lines, s.ys) for s in r.meaning)) for r in drawn.rungs))


ONE_PROCESS = Step("A", ("create", "resume"))
SCENARIOS = {
    "abc": Scenario("abc", "T", "P", "D", (ONE_PROCESS,), proves_in_short="a resume in one process works",
                    does_not_prove_in_short="another process"),
    "long": Scenario("long", "T", "P", "D", (ONE_PROCESS,), does_not_prove_in_short="x", proves_in_short=(
        "a resume in one process works even when the session was closed and opened again many times over")),
}
ABC = ("abc", (ask(Verdict.KEPT), ask(Verdict.LOST, 3, False)))
UNKNOWN_SCENARIO = ("skipped-rung", (SKIPPED,))  # no scenario file given: last, under no heading


def said(proves: str, not_proved: str) -> tuple:
    return ((("proves ", "key"), (proves, "")),), ((("does not prove ", "key"), (not_proved, "")),)


def test_the_ladder_with_what_each_rung_proves_beside_it():
    (abc_proves, abc_not), (its_proves, its_not) = said("a resume in one process works", "another process"), \
        said("it proves this", "not that")  # a rung without a scenario file: the first clauses of its texts
    assert geometry(ladder(run(ABC, UNKNOWN_SCENARIO), SCENARIOS)) == (
        645.5, 122.0, 50.0, (("same process", 8.0, 1),), (
            ("abc", 56.0, ((155.7, 56.5), (218.2, 51.4)), 283.6, 421.8, ((abc_proves, (54.0,)), (abc_not, (67.0,)))),
            ("skipped-rung", 93.0, ((155.7, 76.6),), 246.3, 421.8, ((its_proves, (91.0,)), (its_not, (104.0,))))))


def test_the_ladder_with_what_each_rung_proves_under_it_wrapped():
    wrapped = ((("proves ", "key"), ("a resume in one process works even when the ", "")),
               (("session was closed and opened again many times ", ""),), (("over", ""),))
    (abc_proves, abc_not), (its_proves, its_not) = said("a resume in one process works", "another process"), \
        said("it proves this", "not that")
    assert geometry(ladder(run(ABC, ("long", (ask(Verdict.KEPT),)), UNKNOWN_SCENARIO), SCENARIOS, width=360)) == (
        409.8, 251.0, 50.0, (("same process", 8.0, 2),), (
            ("abc", 56.0, ((155.7, 56.5), (218.2, 51.4)), 283.6, 50.0, ((abc_proves, (76.0,)), (abc_not, (89.0,)))),
            ("long", 115.0, ((155.7, 56.5),), 226.2, 50.0,
             ((wrapped, (135.0, 148.0, 161.0)), (said("", "x")[1], (174.0,)))),
            ("skipped-rung", 200.0, ((155.7, 76.6),), 246.3, 50.0, ((its_proves, (220.0,)), (its_not, (233.0,))))))


def test_what_a_rung_proves_goes_beside_it_with_280_px_or_more_to_spare_and_under_it_with_less():
    judged = run(ABC, ("no-sshd-here", (SKIPPED,)))  # what it proves from 421.0 px: no rounding at the edge
    assert ladder(judged, SCENARIOS).rungs[0].meaning_x == 421.0
    assert ladder(judged, SCENARIOS, width=421.0 + 12 + 280).rungs[0].meaning_x == 421.0  # exactly 280 px: beside
    assert ladder(judged, SCENARIOS, width=421.0 + 12 + 270).rungs[0].meaning_x == 50.0  # 270 px: under


def test_an_empty_run_is_the_names_column_and_its_margins():
    assert geometry(ladder(RunJudgement("r", "v", ()))) == (78.0, 16.0, 50.0, (), ())
