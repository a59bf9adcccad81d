"""Stored runs: written whole or not at all, found by id, judged again, compared."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from handoff.checker.checks import judge
from handoff.cli import app
from handoff.errors import UserError
from handoff.protocol import Backend, Finished, Ready, Turn, encode
from handoff.report import diff
from handoff.runs import store
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Evidence

READY = Ready(t=0.0, pid=7, hostname="h", address=None, home="/h", runtime_version="1.0.102", sdk_version="1.0.25",
              runtime_start_ms=1)


def record(run_id: str, answer: str = "Your favourite retail segment is 'At Risk'.", sent: bool = True) -> RunRecord:
    steps = (Step("A", ("create", "tell", "close")), Step("B", ("resume", "ask", "close"), expect="kept"))
    lines = {
        "A": [READY, Turn(t=0.0, turn=1, kind="tell", session_id="x", prompt="p", answer="OK", ms=1), Finished(t=0.0, ok=True)],
        "B": [READY, Turn(t=0.0, turn=1, kind="ask", session_id="x", prompt="p", answer=answer, ms=1),
              Finished(t=0.0, ok=True)],
    }
    evidence = [Evidence(0.0, "s", "A", "local", "1", 1, True, "acknowledged", "OK"),
                Evidence(0.0, "s", "B", "local", "1", 3, sent, "recalled", answer)]
    scenario = ScenarioRecord("s", Scenario("s", "T", "P", "D", steps),
                              [StepRecord(name, "local", "shared", "home", "x",
                                          [encode(e).decode().rstrip() for e in events])
                               for name, events in lines.items()], evidence, seconds=1.0)
    return RunRecord(run_id, "run", 0.0, 1.0, Versions("0.1.0", "1.0.25", "1.0.102", "3.11", "Linux", "m", 2),
                     RunOptions("At Risk", "retail segment", 2, Backend()), [scenario])


def test_a_saved_run_loads_back_the_same(tmp_path):
    saved = store.save(record("20260101T000000Z-aaaaaa"), tmp_path)
    assert saved == tmp_path / "20260101T000000Z-aaaaaa" and (saved / "run.json").is_file()
    assert store.load("20260101T000000Z-aaaaaa", tmp_path).record == record("20260101T000000Z-aaaaaa")


def test_the_latest_a_prefix_a_suffix_or_a_path_finds_a_run(tmp_path):
    for run_id in ("20260101T000000Z-aaaaaa", "20260102T000000Z-bbbbbb"):
        store.save(record(run_id), tmp_path)
    assert store.load(None, tmp_path).record.id == "20260102T000000Z-bbbbbb"
    assert store.load("latest", tmp_path).record.id == "20260102T000000Z-bbbbbb"
    assert store.load("20260101", tmp_path).record.id == "20260101T000000Z-aaaaaa"
    assert store.load("bbbbbb", tmp_path).record.id == "20260102T000000Z-bbbbbb"
    assert store.load(str(tmp_path / "20260101T000000Z-aaaaaa" / "run.json")).record.id == "20260101T000000Z-aaaaaa"


@pytest.mark.parametrize("reference, says", [("2026", "is ambiguous"), ("nope", "no stored run 'nope'")])
def test_a_run_that_is_not_there_or_not_one_is_a_clear_error(tmp_path, reference, says):
    for run_id in ("20260101T000000Z-aaaaaa", "20260102T000000Z-bbbbbb"):
        store.save(record(run_id), tmp_path)
    with pytest.raises(UserError, match=says):
        store.load(reference, tmp_path)


def test_no_runs_at_all_says_how_to_make_one(tmp_path):
    with pytest.raises(UserError, match="`handoff run` stores one"):
        store.load(None, tmp_path)


def test_a_record_this_version_cannot_read_is_a_clear_error(tmp_path):
    (tmp_path / "20260101T000000Z-cccccc").mkdir()
    (tmp_path / "20260101T000000Z-cccccc" / "run.json").write_text('{"id": 3}')
    with pytest.raises(UserError, match="not a run record this version can read"):
        store.load("cccccc", tmp_path)


def test_a_run_whose_write_fails_leaves_nothing_half_written(tmp_path, monkeypatch):
    def broken_rename(*_):
        raise OSError("disk full")

    monkeypatch.setattr(os, "rename", broken_rename)
    with pytest.raises(OSError):
        store.save(record("20260101T000000Z-dddddd"), tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert store.run_ids(tmp_path) == []


def test_a_partial_run_is_never_listed(tmp_path):
    (tmp_path / ".partial-20260101T000000Z-eeeeee").mkdir()
    (tmp_path / ".partial-20260101T000000Z-eeeeee" / "run.json").write_text("{}")
    assert store.run_ids(tmp_path) == []


def test_diff_names_the_turns_whose_verdict_or_evidence_changed():
    before = judge(record("before"))
    after = judge(record("after", answer="I don't know.", sent=False))
    found = diff.differences(before, after)
    assert {(d.key, d.field, d.before, d.after) for d in found} == {
        (("s", "B", "2", "ask"), "verdict", "kept", "lost"),
        (("s", "B", "2", "ask"), "fact reached model", "yes", "no"),
        (("s", "B", "2", "ask"), "match", "yes", "NO"),
    }
    assert diff.differences(before, judge(record("again"))) == []
    assert "no turn differs" in diff.render(before, judge(record("again")))


def test_report_and_diff_on_the_command_line(tmp_path):
    store.save(record("20260101T000000Z-aaaaaa"), tmp_path)
    store.save(record("20260102T000000Z-bbbbbb", answer="I don't know.", sent=False), tmp_path)
    cli = CliRunner()
    shown = cli.invoke(app, ["report", "aaaaaa", "--runs-dir", str(tmp_path)])
    assert shown.exit_code == 0 and "1 scenario, 1 judged turn, 1 as expected" in shown.output
    assert cli.invoke(app, ["report", "--runs-dir", str(tmp_path)]).exit_code == 1  # the latest: contradicted
    markdown = cli.invoke(app, ["report", "aaaaaa", "--format", "markdown", "--runs-dir", str(tmp_path)])
    assert "| s | A 7@h | B 7@h | yes | kept | yes |" in markdown.output
    wide = cli.invoke(app, ["report", "aaaaaa", "--format", "markdown", "--wide", "--runs-dir", str(tmp_path)])
    assert "| s | 2 ask |" in wide.output
    assert cli.invoke(app, ["report", "aaaaaa", "--format", "xml", "--runs-dir", str(tmp_path)]).exit_code == 2
    missing = cli.invoke(app, ["report", "nope", "--runs-dir", str(tmp_path)])
    assert missing.exit_code == 2 and "no stored run 'nope'" in missing.output
    compared = cli.invoke(app, ["diff", "aaaaaa", "bbbbbb", "--runs-dir", str(tmp_path)])
    assert compared.exit_code == 1 and "1 verdict changed, 1 other difference" in compared.output
    listed = cli.invoke(app, ["runs", "--runs-dir", str(tmp_path)])
    assert listed.exit_code == 0 and "20260102T000000Z-bbbbbb" in listed.output


def test_report_writes_the_html_page_to_a_file(tmp_path):
    store.save(record("20260101T000000Z-aaaaaa"), tmp_path / "runs")
    cli = CliRunner()
    out = tmp_path / "report.html"
    written = cli.invoke(app, ["report", "aaaaaa", "--format", "html", "-o", str(out), "--runs-dir", str(tmp_path / "runs")])
    assert written.exit_code == 0, written.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and f"HTML report: {out}" in written.output
    assert not list(tmp_path.glob("*.partial"))
    nowhere = cli.invoke(app, ["report", "aaaaaa", "--format", "html", "-o", str(tmp_path / "no" / "such" / "dir" / "r.html"),
                               "--runs-dir", str(tmp_path / "runs")])
    assert nowhere.exit_code == 2 and "--output" in nowhere.output and "Traceback" not in nowhere.output


def test_report_without_a_run_shows_the_latest_matrix_run_and_runs_tells_lab_runs_apart(tmp_path):
    import msgspec

    store.save(record("20260101T000000Z-aaaaaa"), tmp_path)
    lab = msgspec.structs.replace(record("20260102T000000Z-bbbbbb"), command="lab")
    store.save(lab, tmp_path)
    runner = CliRunner()
    matrix = runner.invoke(app, ["report", "--format", "json", "--runs-dir", str(tmp_path)])
    assert '"id":"20260101T000000Z-aaaaaa"' in matrix.output.replace(" ", "")
    picked = runner.invoke(app, ["report", "--kind", "lab", "--format", "json", "--runs-dir", str(tmp_path)])
    assert '"id":"20260102T000000Z-bbbbbb"' in picked.output.replace(" ", "")
    none = runner.invoke(app, ["report", "--kind", "skew", "--runs-dir", str(tmp_path)])
    assert none.exit_code == 2 and "no stored `handoff skew` run" in none.output
    listed = runner.invoke(app, ["runs", "--runs-dir", str(tmp_path)]).output
    assert "lab: session x, fact 'At Risk'" in listed


def test_diff_says_a_refused_question_was_kept_before_in_verdict_words():
    """A question the guard refused has no turn number (it never happened): it is still
    matched with the same question another run answered, by its place in its step."""
    import dataclasses

    import msgspec

    from handoff.protocol import ActionFailed

    kept = record("failing")
    refused_lines = [encode(e).decode().rstrip() for e in (
        READY, ActionFailed(t=0.0, action="resume", message="another writer holds this session's lease", refused=True),
        Finished(t=0.0, ok=False))]
    scenario = kept.scenarios[0]
    guarded = dataclasses.replace(scenario.scenario, steps=(
        scenario.scenario.steps[0], Step("B", ("resume", "ask", "close"), expect="refused", guarded=True)))
    before = judge(msgspec.structs.replace(kept, scenarios=[msgspec.structs.replace(scenario, scenario=guarded)]))
    refusing = msgspec.structs.replace(scenario, scenario=guarded, steps=[
        scenario.steps[0], msgspec.structs.replace(scenario.steps[1], lines=refused_lines)])
    after = judge(msgspec.structs.replace(record("passing"), scenarios=[refusing]))
    text = diff.render(before, after)
    assert "s turn 2 (B, ask): kept → refused, NOT as expected → as expected" in text
    assert "present" not in text and "absent" not in text


def test_an_output_is_written_whole_without_following_a_link_beside_it(tmp_path):
    """A link planted where a temporary file might go (the old `<name>.partial`) is left
    alone, its target untouched; only the path named is written, and nothing else stays."""
    store.save(record("20260101T000000Z-aaaaaa"), tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "report.json.partial").symlink_to(victim)
    done = CliRunner().invoke(app, ["report", "--format", "json", "-o", str(out / "report.json"),
                                    "--runs-dir", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "report.json.partial"]
    assert '"id":"20260101T000000Z-aaaaaa"' in (out / "report.json").read_text().replace(" ", "")


def test_runs_and_diff_say_which_path_to_the_model_each_run_took(tmp_path, monkeypatch):
    """The Copilot API and a BYOK provider teach different things (a resume with no model
    keeps the session's on the one, has none on the other): every reader says which."""
    import msgspec

    from handoff.protocol import WITNESS_COPILOT_API

    monkeypatch.setenv("COLUMNS", "1000")
    store.save(record("20260101T000000Z-aaaaaa"), tmp_path)
    lab_path = record("20260102T000000Z-bbbbbb")
    lab_path = msgspec.structs.replace(lab_path, options=msgspec.structs.replace(
        lab_path.options, backend=Backend(WITNESS_COPILOT_API, "")))
    store.save(lab_path, tmp_path)
    runner = CliRunner()
    listed = runner.invoke(app, ["runs", "--runs-dir", str(tmp_path)]).output
    assert "s (BYOK)" in listed and "s (Copilot API)" in listed
    compared = runner.invoke(app, ["diff", "aaaaaa", "bbbbbb", "--runs-dir", str(tmp_path)]).output
    assert compared.startswith("The two runs took different paths to the model: 20260101T000000Z-aaaaaa the BYOK "
                               "path, 20260102T000000Z-bbbbbb the Copilot API one")
    same = runner.invoke(app, ["diff", "aaaaaa", "aaaaaa", "--runs-dir", str(tmp_path)]).output
    assert "different paths" not in same
    shown = runner.invoke(app, ["report", "bbbbbb", "--runs-dir", str(tmp_path)]).output
    assert "Model: the witness model as the Copilot API" in shown
