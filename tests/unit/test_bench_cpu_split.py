"""bench/matrix.py splits a run's CPU time by the workers' own reports."""

from __future__ import annotations

import json

import pytest

from bench.matrix import cpu_split


def _step(*events):
    return {"events": [{"event": "ready"}, *events]}


def test_the_split_sums_what_the_workers_reported_and_leaves_the_rest(tmp_path):
    results = {"results": [
        {"steps": [_step({"event": "finished", "ok": True, "cpu_s": {"worker": 0.04, "runtime": 0.8}}),
                   _step({"event": "finished", "ok": True, "cpu_s": {"worker": 0.7, "runtime": 0.75}})]},
        {"steps": [_step({"event": "holding"})]},  # killed on purpose: no report
    ]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    split = cpu_split(10.0, path)
    assert split.lifecycles == 2
    assert split.runtimes == pytest.approx(1.55) and split.workers == pytest.approx(0.74)
    assert split.rest == pytest.approx(10.0 - 1.55 - 0.74)


def test_no_split_without_a_readable_results_file(tmp_path):
    assert cpu_split(1.0, tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{")
    assert cpu_split(1.0, tmp_path / "bad.json") is None
