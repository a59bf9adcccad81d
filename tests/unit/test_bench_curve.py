"""bench/curve.py: the rows of a throughput curve, its CPU bound, its knee, and the host
rotation of the curve across simulated hosts."""

from __future__ import annotations

import pytest

from bench.curve import Level, knee, rotation


def _level(level: int, rate: float, cpu_per: float = 2.0, cores: int = 2) -> Level:
    count = 6
    return Level(level, count, count / rate, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], cpu_per * count, 0, cores)


def test_the_bound_is_cores_over_cpu_seconds_per_handoff_and_the_row_says_how_close():
    level = Level(4, 8, 10.0, [1.0] * 8, 16.0, 0, 2)  # 0.8 handoffs/s, 2 CPU-s each, 2 cores
    assert level.rate == pytest.approx(0.8)
    assert level.cpu_per == pytest.approx(2.0)
    assert level.bound == pytest.approx(1.0)
    assert level.of_bound == pytest.approx(0.8)
    assert level.row() == ["4", "8", "0.80", "1.00", "1.00", "1.00", "2.00", "1.00", "80%", "0"]


def test_no_cpu_measured_means_no_bound_rather_than_a_division_by_zero():
    level = Level(1, 2, 4.0, [2.0, 2.0], 0.0, 0, 2)
    assert level.bound == 0.0 and level.of_bound is None
    assert level.row()[8] == "—"


def test_the_knee_is_the_last_level_that_still_paid_for_more_at_a_time():
    levels = [_level(1, 0.30), _level(2, 0.50), _level(4, 0.52), _level(8, 0.40)]
    assert knee(levels).level == 2  # 4 at a time adds only 4 %


def test_a_curve_that_still_climbs_has_no_knee_within_its_levels():
    assert knee([_level(1, 0.3), _level(2, 0.5), _level(4, 0.7)]) is None
    assert knee([_level(1, 0.3)]) is None and knee([]) is None


def test_every_handoff_crosses_to_another_host_and_every_host_writes_and_resumes():
    placed = [rotation(number, 3) for number in range(3)]
    assert placed == [(0, 1), (1, 2), (2, 0)]
    assert all(a != b for a, b in placed)
    assert {a for a, _ in placed} == {b for _, b in placed} == {0, 1, 2}
