"""Rendering results: the table, the explanations, the summary, and the JSON file."""

import json

from handoff.checks import Row
from handoff.report import render, write_json
from handoff.results import ScenarioResult, StepResult
from handoff.witness.server import Evidence


def result(name):
    evidence = Evidence(0.0, name, "B", "local", "2", 3, True, "recalled", "Your favourite is 'At Risk'.")
    step = StepResult(name, "B", "local", "shared", "x", events=[{"event": "finished", "ok": True}], exit_code=0)
    return ScenarioResult(name, f"{name} title", f"{name} proves this", f"{name} proves not that", "At Risk",
                          steps=[step], evidence=[evidence], seconds=1.5)


def row(scenario, kind="ask", verdict="kept", expected="kept", match=True, evidence="answer + wire"):
    return Row(scenario=scenario, step="B", turn="2", kind=kind, ran_in="B pid 1@h", store="shared",
               closed_before_resume="yes", answer="Your favourite is 'At Risk'.", fact_reached_model="yes",
               event_log="—", verdict=verdict, basis=f"{scenario} basis", evidence=evidence, expected=expected,
               match=match)


RESULTS = [result("same-process"), result("isolated-store"), result("no-id")]
ROWS = [
    row("same-process", kind="tell", verdict="", expected="", match=None),
    row("same-process"),
    row("isolated-store", verdict="unknown", expected="lost", match=False),
    row("no-id", verdict="lost", expected="lost", evidence="answer only"),
]


def test_render_shows_headers_scenarios_and_explanations():
    text = render(RESULTS, ROWS, "At Risk")
    assert text.startswith("Fact to remember: 'At Risk'")
    for header in ("scenario", "turn", "ran in", "store", "closed", "answer", "reached", "event log",
                   "verdict", "evidence", "expected", "match"):
        assert header in text
    for r in RESULTS:
        assert f"{r.name} — {r.title} (1.5 s)" in text
        assert f"  proves: {r.proves}" in text
        assert f"  does not prove: {r.does_not_prove}" in text
    assert "  turn 2 (B): unknown — isolated-store basis" in text


def test_the_table_says_what_each_verdict_rests_on():
    lines = render(RESULTS, ROWS, "At Risk").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("no-id"))
    assert "lost       answer      lost" in lines[at]  # verdict, then evidence wrapped over two lines
    assert "only" in lines[at + 1]


def test_render_marks_mismatches_in_the_table():
    lines = render(RESULTS, ROWS, "At Risk").splitlines()
    assert any("isolated-store" in line and line.rstrip().endswith("NO") for line in lines)
    assert any("no-id" in line and line.rstrip().endswith("yes") for line in lines)


def test_summary_names_the_scenarios_not_as_expected():
    last = render(RESULTS, ROWS, "At Risk").splitlines()[-1]
    assert last == "3 scenarios, 3 judged turns, 2 as expected; NOT as expected: isolated-store"


def test_summary_when_everything_is_as_expected():
    last = render(RESULTS, [r for r in ROWS if r.match is not False], "At Risk").splitlines()[-1]
    assert last == "3 scenarios, 2 judged turns, 2 as expected"


def test_skipped_scenarios_say_why():
    skipped = result("crash-after-turn")
    skipped.skipped_reason = "no runtime"
    assert "  skipped: no runtime" in render([skipped], [], "At Risk")


def test_write_json_writes_everything_atomically(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old contents")
    write_json(path, RESULTS, ROWS)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [r["name"] for r in data["results"]] == [r.name for r in RESULTS]
    assert data["results"][0]["evidence"][0]["fact_sent"] is True
    assert data["rows"][2]["match"] is False
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]
