"""A stored run is untrusted input: a hand-edited or foreign run.json gets a clear error
(exit 2) from the command that reads it, is listed as unreadable with the reason, and never
stops the other runs from being listed — for the cases found by hand and for any value
Hypothesis makes of the record's fields."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from handoff.cli import app
from handoff.runs import store
from handoff.runs.record import encode

from tests.unit.test_runs import record

GOOD = "20260101T000000Z-aaaaaa"


def crashed(done) -> bool:
    """Under CliRunner an exception the command let through is exit 1 (the real entry
    point makes it exit 3, "the tool failed"): only a SystemExit is the command's own."""
    return done.exception is not None and not isinstance(done.exception, SystemExit)
BAD = "20260102T000000Z-bbbbbb"


def stored(tmp_path, edit) -> dict:
    """A good run and one edited by ``edit`` (given the record as JSON data), side by side."""
    store.save(record(GOOD), tmp_path)
    data = json.loads(encode(record(BAD)))
    edited = edit(data)
    path = tmp_path / BAD
    path.mkdir()
    (path / "run.json").write_text(edited if isinstance(edited, str) else json.dumps(edited))
    return data


def started_at(value):
    def edit(data):
        data["started_at"] = value
        return data
    return edit


def stray_step(data):
    data["scenarios"][0]["steps"][1]["step"] = "nobody-knows-me"
    return data


def deeply_nested(data):
    return json.dumps(data).replace("{", '{"x": ' + "[" * 100_000 + "]" * 100_000 + ", ", 1)


def step_twice(data):
    steps = data["scenarios"][0]["steps"]
    steps.append(steps[0])
    return data


def steps_swapped(data):
    steps = data["scenarios"][0]["steps"]
    steps[0], steps[1] = steps[1], steps[0]
    return data


def many_values(data):
    """Tiny values beyond the record's bound (MAX_VALUES), in 8 MB: a record of 500,000
    empty steps in 36 MB took `handoff runs` to 740 MB."""
    return json.dumps(data)[:-1] + ', "padding": [' + "0," * 4_000_000 + "0]}"


def step_named(name):
    def edit(data):
        old = data["scenarios"][0]["scenario"]["steps"][0]["name"]
        data["scenarios"][0]["scenario"]["steps"][0]["name"] = name
        for step in data["scenarios"][0]["steps"]:
            if step["step"] == old:
                step["step"] = name
        return data
    return edit


def scenario_named(name):
    def edit(data):
        data["scenarios"][0]["name"] = name
        return data
    return edit


def long_fact(data):
    data["options"]["fact"] = "v" * 200_000  # every diagram lays the fact out, a character at a time
    return data


def step_version(field, value):
    def edit(data):
        data["scenarios"][0]["scenario"]["steps"][0][field] = value
        return data
    return edit


def no_steps(data):
    data["scenarios"][0]["scenario"]["steps"] = []
    data["scenarios"][0]["steps"] = []
    return data


CASES = {
    "a time past year 9999": (started_at(1e300), "not a time between 1970 and 9999"),
    "a negative time": (started_at(-5.0), "not a time between 1970 and 9999"),
    "a step its scenario does not list": (stray_step, "a step 'nobody-knows-me' that its scenario does not list"),
    "JSON nested 100,000 deep": (deeply_nested, "nests deeper than a run record does"),
    "not JSON": (lambda data: "{", "is not a run record this version can read"),
    "an SDK that is no version": (step_version("sdk", "node@bogus"), "names SDK 'node@bogus', not a version"),
    "a runtime of 5,000 digits": (step_version("runtime", "1.0." + "9" * 5000), "not a version such as 1.0.92"),
    "a scenario without steps": (no_steps, "has no steps"),
    "a step recorded twice": (step_twice, "records a step more than once"),
    "steps recorded out of order": (steps_swapped, "records its steps in another order than it lists them"),
    "a fact longer than a run's": (long_fact, "its fact is 200,000 characters long"),
    "a step name of 100,000 characters": (step_named("A" * 100_000), "a step's name is 1 to 40 ASCII"),
    "a step name with a slash": (step_named("../A"), "a step's name is 1 to 40 ASCII"),
    "a scenario name with a line break": (scenario_named("two\nlines"), "holds a line break"),
    "a scenario name that shows reversed": (scenario_named("abc\u202edef"), "holds a line break"),
    "more values than a run holds": (many_values, "commas, brackets and lines, more than a run's record"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_every_command_says_what_is_wrong_and_the_other_runs_still_list(tmp_path, case):
    edit, says = CASES[case]
    stored(tmp_path, edit)
    runner = CliRunner()
    for command in (["report", BAD], ["report", BAD, "--format", "html", "-o", str(tmp_path / "r.html")],
                    ["report", BAD, "--format", "json"], ["diff", GOOD, BAD]):
        done = runner.invoke(app, [*command, "--runs-dir", str(tmp_path)])
        assert done.exit_code == 2, (command, done.output)
        assert says in done.output and "Traceback" not in done.output
    listed = runner.invoke(app, ["runs", "--runs-dir", str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    assert GOOD in listed.output and BAD in listed.output and says in " ".join(listed.output.split())
    assert runner.invoke(app, ["report", GOOD, "--runs-dir", str(tmp_path)]).exit_code == 0


NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-10**30, max_value=10**30))
VALUES = st.recursive(st.none() | st.booleans() | NUMBERS | st.text(max_size=30),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                      max_leaves=10)
PLACES = ["started_at", "finished_at", "id", "command", "versions", "options", "scenarios"]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(place=st.sampled_from(PLACES), value=VALUES)
def test_no_value_in_a_stored_run_makes_report_or_runs_fail_as_the_tool(tmp_path_factory, place, value):
    root = tmp_path_factory.mktemp("runs")

    def edit(data):
        data[place] = value
        return json.dumps(data, allow_nan=True)

    stored(root, edit)
    runner = CliRunner()
    for command in (["report", BAD], ["runs"], ["report", BAD, "--format", "json"]):
        done = runner.invoke(app, [*command, "--runs-dir", str(root)])
        assert done.exit_code in (0, 1, 2, 4), (command, done.output, done.exception)
        assert "Traceback" not in done.output and not crashed(done)


def reply_time(value: int):
    """A step line the worker could never write: the event log's reply time as a number
    no float holds (it was divided by 1000, and `handoff runs` failed for every run)."""
    def edit(data):
        waited = {"event": "error", "t": 1.0, "action": "ask", "message": "no answer", "timeout_s": 60.0, "turn": 1}
        log = {"event": "eventlog", "t": 1.0, "session_id": "s", "found": True, "last_reply": "OK",
               "last_reply_ms": value}
        lines = data["scenarios"][0]["steps"][-1]["lines"]
        lines[-1:-1] = [json.dumps(waited), json.dumps(log)]  # before its finished line
        return json.dumps(data)
    return edit


def test_a_number_no_float_holds_in_a_step_line_is_an_unreadable_line_not_a_failure(tmp_path):
    stored(tmp_path, reply_time(10**400))
    runner = CliRunner()
    for command in (["runs"], ["report", BAD], ["report", BAD, "--format", "json"], ["diff", GOOD, BAD],
                    ["report", BAD, "--format", "html", "-o", str(tmp_path / "r.html")]):
        done = runner.invoke(app, [*command, "--runs-dir", str(tmp_path)])
        # (report's own exit code says the judgement: 4, since the line could not be read)
        assert done.exit_code in (0, 1, 2, 4), (command, done.output, done.exception)
        assert "Traceback" not in done.output and not crashed(done)


@pytest.fixture
def far_east(monkeypatch):
    """This process's local time 14 hours east of UTC (Kiritimati), as a user's may be."""
    import time

    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("at, readable", [(253402300799.0, False), (253402128000.0, True)])
def test_the_last_time_a_run_may_carry_shows_as_a_date_east_of_utc(tmp_path, far_east, at, readable):
    stored(tmp_path, lambda data: {**data, "started_at": at, "finished_at": at})
    runner = CliRunner()
    listed = runner.invoke(app, ["runs", "--runs-dir", str(tmp_path)])
    assert listed.exit_code == 0 and "Traceback" not in listed.output, listed.output
    report = runner.invoke(app, ["report", BAD, "--runs-dir", str(tmp_path)])
    assert report.exit_code in ((0, 1) if readable else (2,)), report.output
    assert readable or "not a time between 1970 and 9999" in report.output


def test_a_record_larger_than_any_run_is_refused_unread(tmp_path):
    """A sparse 8 GB run.json takes no disk, and was read whole: out of memory."""
    def huge(data):
        return json.dumps(data)

    stored(tmp_path, huge)
    with open(tmp_path / BAD / "run.json", "r+b") as record:
        record.truncate(8 << 30)
    runner = CliRunner()
    listed = runner.invoke(app, ["runs", "--runs-dir", str(tmp_path)])
    assert listed.exit_code == 0 and GOOD in listed.output, listed.output
    for command in (["report", BAD], ["diff", GOOD, BAD], ["sessions", "list", BAD]):
        done = runner.invoke(app, [*command, "--runs-dir", str(tmp_path)])
        assert done.exit_code == 2, (command, done.output, done.exception)
        assert "more than such a file can be" in " ".join(done.output.split()), done.output


def _leaves(value, path=()):
    """Every place in a stored record that holds a value, a worker's line (JSON in a
    string) read as the object it encodes: a path of keys and indices ("line" marks where
    a string is decoded)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _leaves(inner, (*path, index))
    elif isinstance(value, str) and value.startswith('{"event"'):
        yield path
        yield from _leaves(json.loads(value), (*path, "line"))
    else:
        yield path


def _replaced(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if head == "line":
        return json.dumps(_replaced(json.loads(value), rest, new))
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    return [_replaced(inner, rest, new) if index == head else inner for index, inner in enumerate(value)]


LEAVES = sorted(set(_leaves(json.loads(encode(record(BAD))))), key=str)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(place=st.sampled_from(LEAVES), value=VALUES | st.sampled_from(["", "kept", "lost", "nonsense", "A", "ask"]))
def test_no_value_anywhere_in_a_stored_run_makes_a_reader_fail_as_the_tool(tmp_path_factory, place, value):
    """Any one value replaced, however deep: in a step, its scenario, the evidence, a
    worker's line. Every reading command says what it can (exit 0, 1, 2 or 4), never
    fails as the tool would (exit 3, a traceback)."""
    root = tmp_path_factory.mktemp("runs")
    stored(root, lambda data: json.dumps(_replaced(data, place, value), allow_nan=True))
    runner = CliRunner()
    for command in (["runs"], ["report", BAD], ["report", BAD, "--format", "json"], ["diff", GOOD, BAD],
                    ["sessions", "list", BAD]):
        done = runner.invoke(app, [*command, "--runs-dir", str(root)])
        assert done.exit_code in (0, 1, 2, 4), (place, value, command, done.output[-800:], done.exception)
        assert "Traceback" not in done.output and not crashed(done)


def nested_line(data):
    """A worker's line nested deeper than a decoder goes (an array that deep was caught)."""
    data["scenarios"][0]["steps"][0]["lines"].insert(1, '{"a":' * 100_000 + "1" + "}" * 100_000)
    return data


def unknown_place(data):
    """Evidence saying the fact was in a place there is no word for (the HTML page looked
    it up and failed)."""
    data["scenarios"][0]["evidence"][-1]["fact_in"] = ["bogus"]
    return data


def far_home(data):
    """A home no one can look at: a name too long for the kernel."""
    for line_at, line in enumerate(data["scenarios"][0]["steps"][0]["lines"]):
        event = json.loads(line)
        if event.get("event") == "ready":
            data["scenarios"][0]["steps"][0]["lines"][line_at] = json.dumps({**event, "home": "/" + "a" * 300})
    return data


@pytest.mark.parametrize("edit", [nested_line, unknown_place, far_home], ids=lambda edit: edit.__name__)
def test_a_bad_line_place_or_home_in_a_stored_run_never_fails_a_reader(tmp_path, edit):
    stored(tmp_path, edit)
    runner = CliRunner()
    for command in (["runs"], ["report", BAD], ["report", BAD, "--format", "json"], ["diff", GOOD, BAD],
                    ["report", BAD, "--format", "html", "-o", str(tmp_path / "r.html")], ["sessions", "list", BAD],
                    ["report", BAD, "--wide"], ["report", BAD, "--format", "markdown"]):
        done = runner.invoke(app, [*command, "--runs-dir", str(tmp_path)])
        assert done.exit_code in (0, 1, 2, 4), (command, done.output[-800:], done.exception)
        assert "Traceback" not in done.output and not crashed(done)


def many_lines(data):
    """A step of more lines than any worker writes: each a copy of its ask turn."""
    lines = data["scenarios"][0]["steps"][-1]["lines"]
    lines[1:2] = lines[1:2] * 10_001
    return data


def many_calls(data):
    """More calls to the service than a run's witness records, beside the evidence."""
    call = {"at": 1.0, "method": "GET", "path": "/models", "status": 200, "principal": "alice"}
    data["scenarios"][0]["calls"] = [call] * (50_001 - len(data["scenarios"][0]["evidence"]))
    return data


@pytest.mark.parametrize("edit", [many_lines, many_calls], ids=lambda edit: edit.__name__)
def test_a_record_of_more_items_than_a_run_makes_is_refused_before_they_are_decoded(tmp_path, edit):
    """100,000 copies of one line (25 MB, within the byte bound) took 2.2 GB to report."""
    stored(tmp_path, edit)
    runner = CliRunner()
    for command in (["report", BAD], ["report", BAD, "--format", "json"], ["sessions", "list", BAD]):
        done = runner.invoke(app, [*command, "--runs-dir", str(tmp_path)])
        assert done.exit_code == 2 and not crashed(done), (command, done.output)
        assert "more than a run makes" in " ".join(done.output.split())
    listed = runner.invoke(app, ["runs", "--runs-dir", str(tmp_path)])
    assert listed.exit_code == 0 and GOOD in listed.output


def test_a_run_named_by_its_whole_id_a_directory_named_latest_and_a_record_that_is_no_file(tmp_path):
    """A whole id that starts another is that run, not "ambiguous"; a directory named
    `latest` is not the latest run; a run.json that is a directory is listed as unreadable."""
    store.save(record(GOOD), tmp_path)
    longer = GOOD + "0"
    (tmp_path / longer).mkdir()
    (tmp_path / longer / "run.json").write_text(json.dumps(json.loads(encode(record(longer)))))
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "run.json").write_text(json.dumps(json.loads(encode(record(BAD)))))
    older = "20250101T000000Z-cccccc"
    (tmp_path / older / "run.json").mkdir(parents=True)
    assert store.load(GOOD, tmp_path).record.id == GOOD
    assert store.load("latest", tmp_path).path.name == GOOD
    listed = CliRunner().invoke(app, ["runs", "--runs-dir", str(tmp_path)])
    assert listed.exit_code == 0 and older in listed.output and "cannot read" in listed.output


def test_a_turn_number_reported_twice_is_a_line_no_reader_takes():
    """Every reader pairs a turn with the witness's records by its number: a second turn of
    one number (a worker numbers each once) drew every record for every such turn."""
    from handoff.protocol import Turn, decode_all, encode as encode_event

    lines = [encode_event(Turn(t=0.0, turn=1, kind="ask", session_id="s", prompt="p", answer=a, ms=1)).decode()
             for a in ("first", "again")]
    events, problems = decode_all(lines)
    assert [event.answer for event in events] == ["first"]
    assert problems == [f"line 2 is not a protocol event (turn 1 was reported already): {lines[1][:79] + '…'!r}"]


def test_a_run_directory_named_latest_is_listed_with_its_own_record(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
    store.save(record(GOOD), tmp_path)
    own = json.loads(encode(record(BAD)))
    own["scenarios"][0]["name"] = "own-scenario"
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "run.json").write_text(json.dumps(own))
    listed = CliRunner().invoke(app, ["runs", "--runs-dir", str(tmp_path)]).output
    [row] = [line for line in listed.splitlines() if line.startswith("latest")]
    assert "own-scenario" in row


def test_text_that_would_show_other_than_it_is_is_printed_escaped():
    from handoff.printable import visible

    assert visible("left\u202eright\u2066x\u2069 one\u2028two") == "left\\u202eright\\u2066x\\u2069 one\\u2028two"
    assert visible("tab\tand\nnewline stay; \x1b[2J does not") == "tab\tand\nnewline stay; \\x1b[2J does not"


def test_a_lane_header_shows_as_much_of_a_hostname_as_a_header_holds():
    from handoff.report.sequence import HEADER_CHARACTERS, participants
    from handoff.runs.history import ScenarioHistory
    from handoff.protocol import Ready, encode as encode_event

    run = record(GOOD)
    ready = Ready(t=0.0, pid=7, hostname="h" * 1_000_000, address=None, home="/h", runtime_version="1.0.102",
                  sdk_version="1.0.25", runtime_start_ms=1)
    run.scenarios[0].steps[0].lines[0] = encode_event(ready).decode().rstrip()
    lanes = participants(ScenarioHistory.of(run.scenarios[0], run.options.fact_told), run.options.backend)
    assert max(len(text) for lane in lanes for text in (lane.title, *lane.details)) <= HEADER_CHARACTERS


def test_the_json_report_writes_each_step_s_facts_once_however_many_turns_it_took(tmp_path):
    """Each turn used to carry its step's facts (every action, every unreadable line): a
    step of 2,000 turns and 2,000 junk lines made gigabytes."""
    from handoff.protocol import Turn, encode as encode_event

    def edit(data):
        lines = data["scenarios"][0]["steps"][-1]["lines"]
        turns = [encode_event(Turn(t=0.0, turn=n, kind="ask", session_id="x", prompt="p", answer="a", ms=1)).decode()
                 for n in range(2, 202)]
        lines[-1:-1] = turns + [f"junk-line-{n}-end" for n in range(200)]
        return data

    stored(tmp_path, edit)
    done = CliRunner().invoke(app, ["report", BAD, "--format", "json", "--runs-dir", str(tmp_path)])
    assert not crashed(done)
    assert done.output.count("junk-line-7-end") <= 3, done.output.count("junk-line-7-end")  # its line, its problem
