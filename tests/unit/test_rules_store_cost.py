"""The rules of handoff/checker/store_cost.py that pick a fill's counts and compare its
windows, each pinned on its own:

* the counts are a fill's, and of the first fill that reported both counts: another
  action's counts, or a fill that reported only one of them, are passed over;
* what the counts were (``store_written_is``) is carried as the worker said it;
* a late window that was given nothing has no cost a byte, so no growth: not told.
"""

from __future__ import annotations

import pytest

from handoff.checker.store_cost import CostGrowth, Window, cost_growth
from handoff.protocol import ActionDone

GIVEN = [1000] * 10
WRITTEN = [1000 * n for n in range(1, 11)]  # grows with the log


def fill(given, written, written_is="bytes counted", action="fill"):
    return ActionDone(t=0.0, action=action, session_id="x", ms=1, turns=len(given or written or ()),
                      store_given=None if given is None else tuple(given),
                      store_written=None if written is None else tuple(written), store_written_is=written_is)


def test_only_a_fill_s_counts_are_its_cost_not_another_action_s():
    counted = fill(GIVEN, WRITTEN)
    other = fill([1000] * 10, [6000] * 10, action="tell")  # flat, but not a fill
    assert cost_growth([other, counted]) == cost_growth([counted])
    assert cost_growth([other]) is None
    assert cost_growth([other, counted]).flat is False


@pytest.mark.parametrize("half", [
    fill(None, [6000] * 10),  # only what was written reported
    fill((), [6000] * 10),  # nothing given reported
    fill([1000] * 10, None),  # only what was given reported
    fill([1000] * 10, ()),  # nothing written reported
], ids=["given-none", "given-empty", "written-none", "written-empty"])
def test_a_fill_that_reported_only_one_count_is_passed_over_for_one_that_reported_both(half):
    counted = fill(GIVEN, WRITTEN)
    assert cost_growth([half]) is None
    assert cost_growth([half, counted]) == cost_growth([counted])
    assert cost_growth([half, counted]).flat is False


@pytest.mark.parametrize("written_is, carried", [("bytes counted", "bytes counted"),
                                                  ("pages written (SQLite)", "pages written (SQLite)"),
                                                  (None, "")])
def test_what_the_counts_are_is_carried_as_the_worker_said_it(written_is, carried):
    assert cost_growth([fill(GIVEN, WRITTEN, written_is=written_is)]).written_is == carried


def test_a_late_window_given_nothing_has_no_growth_and_is_not_told():
    cost = cost_growth([fill([1000, 1000, 1000, 0], [500, 500, 500, 500])])
    assert cost.late.per_byte is None and cost.early.per_byte == 0.5
    assert (cost.growth, cost.flat) == (None, None)
    assert cost.words().startswith("store cost per turn not told: 0.5 B paid a byte given")
    made = CostGrowth(Window(2, 3, 100, 50), Window(8, 9, 0, 0), "")
    assert made.growth is None and made.words().endswith("nothing given in 8–9")
