"""`handoff skew` without a runtime: the cells it plans, the expectations it reads, the
grid it renders from a stored record."""

import pytest

from handoff.checker.checks import judge
from handoff.errors import UserError
from handoff.fact import Fact
from handoff.protocol import Backend, EventLog, Finished, Ready, Turn, encode
from handoff.report.formats import rendered
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
from handoff.skew import grid
from handoff.skew.expected import Pair, expectation, load
from handoff.witness.evidence import Evidence
from handoff.words import Command, Verdict

OLD, NEW = Pair("1.0.92", "1.0.25"), Pair("1.0.102", "1.0.25")


def rules_file(tmp_path, text):
    path = tmp_path / "expected.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_first_matching_rule_gives_the_verdict(tmp_path):
    rules = load(rules_file(tmp_path, '[[rules]]\nresumed_runtime = ["1.0.92"]\ncreated_runtime = ["1.0.102"]\n'
                                      'expect = "lost"\nbecause = "b1"\n\n[[rules]]\nexpect = "kept"\nbecause = "b2"\n'))
    assert expectation(rules, NEW, OLD).expect == "lost"
    assert expectation(rules, OLD, NEW).because == "b2"


@pytest.mark.parametrize("text, expected", [
    ('[[rules]]\nexpect = "maybe"\nbecause = "b"\n', "rule 1: field 'expect' must be one of kept, lost"),
    ('[[rules]]\nexpect = "kept"\n', "rule 1: field 'because' is missing"),
    ('[[rules]]\nexpect = "kept"\nbecause = "b"\nresumed_sdk = "1.0.25"\n', "rule 1: field 'resumed_sdk' must be a list"),
    ('[[rules]]\nexpect = "kept"\nbecause = "b"\nresumed = ["1.0.25"]\n', "rule 1: field 'resumed' is not a known field"),
    ("title = 'x'\n", "needs at least one [[rules]] table"),
])
def test_rule_errors_name_the_file_rule_and_field(tmp_path, text, expected):
    path = rules_file(tmp_path, text)
    with pytest.raises(UserError, match=str(path)) as raised:
        load(path)
    assert expected in str(raised.value)


def test_a_cell_no_rule_matches_is_an_input_error(tmp_path):
    rules = load(rules_file(tmp_path, '[[rules]]\nresumed_runtime = ["1.0.92"]\nexpect = "kept"\nbecause = "b"\n'))
    with pytest.raises(UserError, match="no rule for created by 1.0.92/1.0.25, resumed by 1.0.102/1.0.25"):
        expectation(rules, OLD, NEW)


def test_the_plan_is_every_pair_both_ways_with_versions_and_expectations_filled_in():
    cells = grid.plan([OLD, NEW])
    assert [c.name for c in cells] == ["1.0.92+1.0.25-to-1.0.92+1.0.25", "1.0.92+1.0.25-to-1.0.102+1.0.25",
                                       "1.0.102+1.0.25-to-1.0.92+1.0.25", "1.0.102+1.0.25-to-1.0.102+1.0.25"]
    created, resumed = cells[1].steps
    assert (created.runtime, created.sdk, created.actions) == ("1.0.92", "1.0.25", ("create", "tell", "close"))
    assert (resumed.runtime, resumed.sdk, resumed.expect) == ("1.0.102", "1.0.25", "kept")
    assert grid.pairs_of(cells[2]) == (NEW, OLD)
    assert "Expected kept" in cells[1].proves


def test_the_shipped_expectations_say_runtime_1_0_40_never_delivers_to_sdk_1_0_25():
    [cell] = [c for c in grid.plan([NEW, Pair("1.0.40", "1.0.25")]) if c.name == "1.0.102+1.0.25-to-1.0.40+1.0.25"]
    assert cell.steps[1].expect == "undelivered"


def test_versions_must_be_pinned_installed_and_well_formed():
    with pytest.raises(UserError, match=r'--sdk 1\.0: not a version number'):
        grid.chosen_versions([], ["1.0"])
    with pytest.raises(UserError, match=r"runtime 1.0.99 is not pinned"):
        grid.chosen_versions(["1.0.99"], [])


# The grid, rendered from a record as `handoff skew` stores it

FACT = Fact()
RECALLED = "Your favourite retail segment is 'At Risk'."


def step(name, pair, *events):
    ready = Ready(t=0.0, pid=1, hostname="h", address=None, home="/h", runtime_version=pair.runtime,
                  sdk_version=pair.sdk, runtime_start_ms=1)
    lines = [encode(e).decode().rstrip("\n") for e in (ready, *events, Finished(t=0.0, ok=True))]
    return StepRecord(name, "local", "shared", "home", "x", lines=lines, exit_code=0)


def cell_record(cell, answer, fact_sent, loaded=(8, 8)):
    created, resumed = grid.pairs_of(cell)
    log = EventLog(t=0.0, session_id="x", found=True, resumes=1, resume_event_count=loaded[0],
                   events_before_resume=loaded[1])
    steps = [step("created", created, Turn(t=0.0, turn=1, kind="tell", session_id="x", prompt="p", answer="OK", ms=1)),
             step("resumed", resumed, Turn(t=0.0, turn=1, kind="ask", session_id="x", prompt="p", answer=answer, ms=1),
                  log)]
    evidence = [Evidence(at=0.0, scenario=cell.name, step=s, host="local", turn="1", messages_received=2,
                         fact_sent=fact_sent, reply_kind="", reply="") for s in ("created", "resumed")]
    return ScenarioRecord(cell.name, cell, steps=steps, evidence=evidence)


def grid_record(outcomes):
    cells = grid.plan([OLD, NEW])
    scenarios = [cell_record(cell, *outcomes[cell.name]) for cell in cells]
    options = RunOptions(fact=FACT.value, topic=FACT.topic, jobs=2, backend=Backend())
    versions = Versions(tool="t", sdk="1.0.25", runtime="1.0.102", python="3", os="linux", machine="h", cores=2)
    return RunRecord("run-1", Command.SKEW, 0.0, 1.0, versions, options, scenarios)


def test_the_grid_has_created_by_rows_and_resumed_by_columns():
    record = grid_record({
        "1.0.92+1.0.25-to-1.0.92+1.0.25": (RECALLED, True),
        "1.0.92+1.0.25-to-1.0.102+1.0.25": (RECALLED, True),
        "1.0.102+1.0.25-to-1.0.92+1.0.25": (RECALLED, True, (7, 8)),
        "1.0.102+1.0.25-to-1.0.102+1.0.25": ("I don't know.", False),
    })
    judgement = judge(record)
    text = rendered(record, judgement, "table")
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.startswith("1.0.")}
    assert rows == {"1.0.92/1.0.25": ["kept", "kept"], "1.0.102/1.0.25": ["kept", "7/8", "lost", "NO(kept)"]}
    assert "4 cells, 3 as expected; NOT as expected: 1.0.102+1.0.25-to-1.0.102+1.0.25" in text
    assert judgement.exit_code() == 1
    markdown = rendered(record, judgement, "markdown")
    assert "| **1.0.102/1.0.25** | kept 7/8 | lost NO(kept) |" in markdown
    assert "| created by ↓ / resumed by → | 1.0.92/1.0.25 | 1.0.102/1.0.25 |" in markdown


def test_the_summary_counts_cells_not_turns():
    """A cell on runtime 1.0.78 or 1.0.40 has its tell judged too (failed loudly, as
    expected): 16 cells once read "20 as expected"."""
    from handoff.checker.verdicts import Expectation, RunJudgement, ScenarioJudgement, TurnJudgement
    from handoff.report.skew_grid import _summary

    def turn(kind):
        return TurnJudgement("c", kind, 1, None, verdict=Verdict.KEPT,
                             expectations=(Expectation("verdict", "kept", "kept", True),))

    two_judged = ScenarioJudgement("c", "t", "p", "d", 1.0, (turn("tell"), turn("ask")))
    assert _summary(RunJudgement("r", "At Risk", (two_judged, two_judged))).startswith("2 cells, 2 as expected")


def test_the_grid_and_its_prose_fit_the_terminal(monkeypatch):
    record = grid_record({
        "1.0.92+1.0.25-to-1.0.92+1.0.25": ("I don't know.", False),
        "1.0.92+1.0.25-to-1.0.102+1.0.25": ("I don't know.", False),
        "1.0.102+1.0.25-to-1.0.92+1.0.25": (RECALLED, True, (7, 8)),
        "1.0.102+1.0.25-to-1.0.102+1.0.25": ("I don't know.", False),
    })
    for columns in (80, 100):
        monkeypatch.setenv("COLUMNS", str(columns))
        lines = rendered(record, judge(record), "table").splitlines()
        assert max(map(len, lines)) <= columns, columns
        assert any(line.startswith("4 cells, 1 as expected; NOT as expected:") for line in lines)
