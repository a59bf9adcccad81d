"""`handoff sessions list [WHERE]` on what a user has: a Copilot home (its session files,
written here by hand as the runtime writes them: data, not a mock), the lab's home when
nothing is named, a stored run, a SQLite store; and one clear line, exit 2, for what is
none of these. (tests/e2e/test_lab.py lists the home a real lab run made.)"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from handoff.cli import app
from handoff.fact import Fact
from handoff.lab import options as lab_options
from handoff.protocol import ActionDone, Backend, EventLog, Finished, Ready, Turn, encode
from handoff.runs import store as runs
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
from handoff.scenario import Scenario, Step
from handoff.stores.database import connect, sqlite_url
from handoff.stores.homes import home_sessions
from handoff.stores.registry import Registry

PHONE = "4155550123"
SECRET_ID = f"cust-{PHONE}"
FACT = Fact()
PROMPT = FACT.remember_prompt
RECALLED = "Your favourite retail segment is 'At Risk'."
NOT_A_PLACE = "is a directory but holds no session-state/: not a Copilot home, a run or a store"


def event(kind: str, at: str, **data) -> dict:
    return {"id": f"e-{kind}-{at}", "parentId": None, "timestamp": at, "type": kind, "data": data}


def write_session(home: Path, session_id: str, *events: dict, raw: bytes = b"") -> Path:
    folder = home / "session-state" / session_id
    folder.mkdir(parents=True)
    log = b"".join(json.dumps(e).encode() + b"\n" for e in events) + raw
    (folder / "events.jsonl").write_bytes(log)
    (folder / "workspace.yaml").write_text(f"id: {session_id}\n")
    return folder


def closed_session(home: Path, session_id: str, day: str = "2026-03-01") -> None:
    """Two turns and a close after each, as the lab's full run leaves it."""
    write_session(
        home, session_id,
        event("session.start", f"{day}T10:00:00.000Z", sessionId=session_id, copilotVersion="1.0.102"),
        event("user.message", f"{day}T10:00:01.000Z", content=PROMPT),
        event("assistant.message", f"{day}T10:00:02.000Z", content="OK"),
        event("session.shutdown", f"{day}T10:00:03.000Z"),
        event("session.resume", f"{day}T10:00:04.000Z", eventCount=4),
        event("user.message", f"{day}T10:00:05.000Z", content="Which retail segment did I say was my favourite?"),
        event("assistant.message", f"{day}T10:00:06.000Z", content=RECALLED),
        event("session.shutdown", f"{day}T10:05:00.000Z"),
    )


def a_database(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as database:
        database.execute("CREATE TABLE sessions (id TEXT)")
        database.commit()


def local(stamp: str) -> str:
    """How the listing shows a log's UTC time: in this machine's zone, as the registry's."""
    seconds = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S")


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    """A line each: these tests read the listing's lines one by one (the test of fitting
    the terminal sets its own width)."""
    monkeypatch.setenv("COLUMNS", "1000")


def listed(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["sessions", "list", *arguments])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    closed_session(home, "analyst-demo")
    write_session(  # the runtime died mid-turn: the log ends with the prompt
        home, "handoff-0123456789abcdef",
        event("session.start", "2026-03-02T09:00:00Z", copilotVersion="1.0.92"),
        event("user.message", "2026-03-02T09:00:01Z", content="first\nline  with   spaces"),
    )
    (home / "session-state" / "empty").mkdir()  # a folder the runtime made before its first event
    (home / "session-state" / ".session-operation-locks").mkdir()  # the runtime's own, not a session
    a_database(home / "session-store.db")  # the index list_sessions reads: not read
    return home


def test_a_home_lists_each_session_with_what_its_event_log_says(home):
    code, output = listed(str(home))
    assert code == 0, output
    first, _, _, newest, older, empty = output.splitlines()
    assert first == f"Copilot home {home}: 3 sessions, read from its session-state/ without starting a runtime"
    assert newest.split()[:5] == ["handoff-0123456789abcdef", *local("2026-03-02T09:00:00Z").split(),
                                  *local("2026-03-02T09:00:01Z").split()]
    assert newest.split()[5:] == ["1", "no", "(ends", "with", "user.message)", "runtime", "1.0.92", "first", "line", "with",
                                  "spaces"]
    assert older.split()[:5] == ["analyst-demo", *local("2026-03-01T10:00:00.000Z").split(),
                                 *local("2026-03-01T10:05:00.000Z").split()]
    assert "  2  yes" in older and "runtime 1.0.102" in older and "Remember this: my favourite retail segm…" in older
    assert empty.split()[0] == "empty" and "(no events.jsonl)" in empty
    assert ".session-operation-locks" not in output


def test_the_session_state_folder_itself_lists_its_home(home):
    assert listed(str(home / "session-state"))[1].splitlines()[0].startswith(f"Copilot home {home}: 3 sessions")


def test_without_where_it_lists_the_labs_home_and_says_so_first(home, monkeypatch):
    monkeypatch.setattr(lab_options, "DEFAULT_HOME", home)
    code, output = listed()
    assert code == 0, output
    assert output.splitlines()[0] == (
        f"The lab's home, {home} (the default; `handoff sessions list WHERE` lists another home, a run or a store): "
        f"3 sessions, read from its session-state/ without starting a runtime")
    assert "analyst-demo" in output


def test_without_where_and_before_any_lab_run_it_says_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.setattr(lab_options, "DEFAULT_HOME", tmp_path / "lab-home")
    code, output = listed()
    assert code == 0
    assert output.startswith(f"The lab's home, {tmp_path / 'lab-home'}, holds no sessions yet: `handoff lab` makes one")
    assert not (tmp_path / "lab-home").exists()  # listing creates nothing


def test_a_home_with_no_session_yet_says_so(tmp_path):
    (tmp_path / "session-state").mkdir()
    assert listed(str(tmp_path)) == (0, f"Copilot home {tmp_path}: no sessions in its session-state/\n")


def test_an_id_that_carries_a_phone_number_is_shown_redacted(tmp_path):
    closed_session(tmp_path, SECRET_ID)
    code, output = listed(str(tmp_path))
    assert code == 0
    assert PHONE not in output and "cust…(redacted: phone number)" in output


def test_text_from_a_log_is_printed_with_its_control_characters_escaped(tmp_path):
    write_session(tmp_path, "s", event("user.message", "2026-03-01T10:00:00Z", content="hi \x1b]0;owned\x07 there"))
    output = listed(str(tmp_path))[1]
    assert "\x1b" not in output and "\x07" not in output and "\\x1b" in output


def test_a_torn_or_odd_log_is_read_as_far_as_it_goes(tmp_path):
    write_session(tmp_path, "torn",
                  event("session.start", "not a time"), event("user.message", "2026-03-01T10:00:00", content=7),
                  {"type": ["no"], "timestamp": "0001-01-01T00:00:00Z"}, raw=b'[1]\n{"type": "user.mess')
    [session] = home_sessions(tmp_path).sessions
    assert (session.turns, session.summary, session.unreadable_lines) == (1, None, 2)
    assert session.created_at == session.modified_at == datetime(2026, 3, 1, 10, tzinfo=timezone.utc).timestamp()
    assert session.last_event == "(no type)" and session.closed is False
    assert listed(str(tmp_path))[0] == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_place_of_a_log_is_never_opened(tmp_path):
    (tmp_path / "session-state" / "s").mkdir(parents=True)
    os.mkfifo(tmp_path / "session-state" / "s" / "events.jsonl")
    assert "(no events.jsonl)" in listed(str(tmp_path))[1]  # and the listing did not hang on it


def test_a_directory_of_kept_homes_lists_each_home(tmp_path):
    closed_session(tmp_path / "cross-process" / "home-shared", "handoff-aaaaaaaaaaaaaaaa")
    closed_session(tmp_path / "copied" / "home-A", "handoff-bbbbbbbbbbbbbbbb")
    (tmp_path / "copied" / "worker-A.stderr").write_text("")
    code, output = listed(str(tmp_path))
    assert code == 0, output
    assert output.splitlines()[0] == f"{tmp_path} holds 2 Copilot homes (as `handoff run --keep` leaves them):"
    assert f"Copilot home {tmp_path / 'copied' / 'home-A'}: 1 session" in output
    assert output.index("handoff-bbbbbbbbbbbbbbbb") < output.index("handoff-aaaaaaaaaaaaaaaa")


# --- a stored run --------------------------------------------------------------------------

def lines(*events) -> list[str]:
    return [encode(e).decode().rstrip("\n") for e in events]


def ready(pid: int, host: str = "vm", home: str = "/h") -> Ready:
    return Ready(t=1.0, pid=pid, hostname=host, address=None, home=home, runtime_version="1.0.102",
                 sdk_version="1.0.25", runtime_start_ms=400)


def stored_run(runs_dir: Path, command: str = "run", home: str = "/h") -> str:
    the_id = "handoff-0123456789abcdef"
    ready_here = ready(101, home=home)
    a = StepRecord("A", "local", "shared", "home", the_id, started_at=100.0, ended_at=101.0, lines=lines(
        ready_here, ActionDone(t=2.0, action="create", session_id=the_id, ms=5),
        Turn(t=3.0, turn=1, kind="tell", session_id=the_id, prompt=FACT.remember_prompt, answer="OK", ms=9),
        ActionDone(t=4.0, action="close", session_id=the_id, ms=1), Finished(t=5.0, ok=True)))
    b = StepRecord("B", "host-b", "copied", "home", the_id, started_at=102.0, ended_at=103.0, lines=lines(
        ready(202, "host-b"), ActionDone(t=6.0, action="resume", session_id=the_id, ms=5),
        Turn(t=7.0, turn=1, kind="ask", session_id=the_id, prompt=FACT.question_prompt, answer=RECALLED, ms=9),
        EventLog(t=8.0, session_id=the_id, found=True), Finished(t=9.0, ok=False)))  # killed before its close
    secret = StepRecord("raw", "local", "shared", "home", SECRET_ID, started_at=104.0, ended_at=105.0, lines=lines(
        ready(303), ActionDone(t=2.0, action="create", session_id=SECRET_ID, ms=5),
        ActionDone(t=3.0, action="close", session_id=SECRET_ID, ms=1)))
    scenario = Scenario("copied", "T", "P", "D", (Step("A", ("create", "tell", "close")),
                                                  Step("B", ("resume", "ask", "close"), host="host-b", home="copied",
                                                       principal="bob")))
    other = Scenario("secret-in-id", "T", "P", "D", (Step("raw", ("create", "close")),))
    record = RunRecord("20260101T000000Z-abcdef", command, 0.0, 12.0,
                       Versions("0.1.0", "1.0.25", "1.0.102", "3.11", "Linux", "vm", 2),
                       RunOptions(FACT.value, FACT.topic, 2, Backend()),
                       [ScenarioRecord("copied", scenario, [a, b]), ScenarioRecord("secret-in-id", other, [secret])])
    runs.save(record, runs_dir)
    return record.id


def test_a_run_lists_the_sessions_its_steps_used_from_its_record(tmp_path):
    run_id = stored_run(tmp_path)
    code, output = listed(run_id, "--runs-dir", str(tmp_path))
    assert code == 0, output
    first, _, _, copied, secret, hidden, gone = output.splitlines()
    assert first.startswith(f"Run {run_id} (`handoff run`, ") and f"2 sessions its steps used, from its record " \
        f"({tmp_path / run_id})" in first
    assert copied.split()[:6] == ["copied", "handoff-0123456789abcdef", "A,", "B", "(local,", "host-b)"]
    assert "home (shared, copied)" in copied
    assert "  2  no" in copied  # B was killed before it closed the session
    assert secret.startswith("secret-in-id") and "cust…(redacted: phone number)" in secret and PHONE not in output
    assert "  0  yes" in secret
    assert hidden.startswith("1 id is hidden: by the rule in brackets") and "`--show-ids`" in hidden
    assert gone.startswith("Their files were in the run's own homes and stores, removed when it ended")


def test_show_ids_prints_a_hidden_id_in_full_to_its_owner_and_refuses_anyone_else(tmp_path, monkeypatch):
    run_id = stored_run(tmp_path)
    code, output = listed(run_id, "--runs-dir", str(tmp_path), "--show-ids")
    assert code == 0 and SECRET_ID in output and "(redacted" not in output and "is hidden" not in output
    import os
    monkeypatch.setattr(os, "getuid", lambda: os.stat(tmp_path).st_uid + 1)  # as if another user asked
    code, output = listed(run_id, "--runs-dir", str(tmp_path), "--show-ids")
    assert code == 2 and "--show-ids:" in output and "belongs to another user" in output and SECRET_ID not in output


def test_a_run_by_its_directory_its_record_and_an_owner(tmp_path):
    run_id = stored_run(tmp_path)
    assert listed(str(tmp_path / run_id))[1] == listed(run_id, "--runs-dir", str(tmp_path))[1]
    assert listed(str(tmp_path / run_id / "run.json"))[0] == 0
    code, output = listed(run_id, "--runs-dir", str(tmp_path), "--owner", "bob")
    assert code == 0 and "handoff-0123456789abcdef" in output and "secret-in-id" not in output
    assert listed(run_id, "--runs-dir", str(tmp_path), "--owner", "carol")[1].endswith(
        "no step acting as that owner used a session\n")


def test_a_lab_run_points_at_the_home_that_still_holds_its_files(tmp_path):
    home = tmp_path / "lab home"
    closed_session(home, "handoff-0123456789abcdef")
    run_id = stored_run(tmp_path / "runs", command="lab", home=str(home))
    output = listed(run_id, "--runs-dir", str(tmp_path / "runs"))[1]
    assert "`handoff lab`" in output.splitlines()[0]
    assert f"Their files are still in {home}: `handoff sessions list '{home}'` reads them." in output
    gone = stored_run(tmp_path / "other runs", command="lab", home=str(tmp_path / "removed"))
    assert listed(gone, "--runs-dir", str(tmp_path / "other runs"))[1].endswith(
        f"The homes it used, {tmp_path / 'removed'}, /h, hold no session-state/ any more.\n")


# --- a store -------------------------------------------------------------------------------

def test_a_sqlite_store_lists_its_registry_by_path_url_or_store_option(tmp_path):
    path = tmp_path / "store.db"
    database = connect(sqlite_url(path))
    registry = Registry(database)
    registry.created("analyst-demo", "alice", "vm", "1.0.102", "1.0.25")
    registry.turned("analyst-demo", PROMPT)
    registry.created(SECRET_ID, "bob", "vm", "1.0.102")
    database.close()
    for where in ([str(path)], [sqlite_url(path)], ["--store", sqlite_url(path)]):
        code, output = listed(*where)
        assert code == 0, output
        assert output.splitlines()[0] == f"The session registry in {sqlite_url(path)}:"
        assert "analyst-demo" in output and "alice" in output and PHONE not in output
    code, output = listed(str(path), "--owner", "bob")
    assert "cust…(redacted: phone number)" in output and "analyst-demo" not in output


def test_a_homes_own_index_is_no_registry_and_the_message_names_the_home(home):
    code, output = listed(str(home / "session-store.db"))
    assert code == 2
    assert output == (f"error: {home / 'session-store.db'} is the runtime's own index of the Copilot home {home}, "
                      f"not a session registry: give the home to list its sessions: `handoff sessions list {home}`\n")


# --- what is none of them ------------------------------------------------------------------

def sqlite_file(t: Path) -> str:
    a_database(t / "other.db")
    return str(t / "other.db")


def session_folder(t: Path) -> str:
    return str(write_session(t, "s", event("user.message", "2026-03-01T10:00:00Z", content="hi")))


def unreadable_run(t: Path) -> str:
    """A runs directory with one run whose record is not JSON: the error must name the
    record, not say there is no such run."""
    (t / "bad-runs" / "20260101T000000Z-badbad").mkdir(parents=True)
    (t / "bad-runs" / "20260101T000000Z-badbad" / "run.json").write_text("{not json")
    return str(t / "bad-runs")


def runs_dir(t: Path) -> str:
    stored_run(t / "runs")
    return str(t / "runs")


BAD = {
    "a directory that is no home": (lambda t: [str(t / "plain")], f"{{t}}/plain {NOT_A_PLACE}; give a Copilot home"),
    "a file that is neither": (lambda t: [str(t / "x.txt")], "x.txt is a file but neither a SQLite store nor a run's "
                                                              "run.json"),
    "nothing by that name": (lambda t: ["no-such-thing", "--runs-dir", str(t)],
                             "no-such-thing: no such file or directory, and no stored run by that id in"),
    "an empty name": (lambda t: [""], "WHERE is empty"),
    "a stored run that cannot be read, by its id": (lambda t: ["20260101T000000Z-badbad", "--runs-dir",
                                                               unreadable_run(t)], "is not a run record this version can read"),
    "another kind of URL": (lambda t: ["mysql://h/db"], "a store's scheme must be sqlite, postgres or postgresql"),
    "a SQLite file without a registry": (lambda t: [sqlite_file(t)], "without a session registry"),
    "one session's folder": (lambda t: [session_folder(t)], "is one session's directory (it holds events.jsonl): "
                                                            "give its Copilot home"),
    "the runs directory": (lambda t: [runs_dir(t)], "holds stored runs but is no run itself"),
    "both WHERE and --store": (lambda t: [str(t), "--store", str(t)], "give WHERE or --store, not both"),
    "an owner for a home": (lambda t: [str(t / "home"), "--owner", "bob"], "a Copilot home records no owner"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_what_is_not_a_place_with_sessions_is_one_clear_line_and_exit_2(tmp_path, case):
    (tmp_path / "x.txt").write_text("hello")
    (tmp_path / "plain" / "logs").mkdir(parents=True)
    (tmp_path / "home" / "session-state").mkdir(parents=True)
    arguments, says = BAD[case]
    code, output = listed(*arguments(tmp_path))
    assert code == 2
    assert output.startswith("error: ") and output.count("\n") == 1
    assert says.format(t=tmp_path) in output


def test_an_event_log_larger_than_any_is_listed_as_unreadable_not_read(tmp_path):
    from handoff.eventlog import MAX_LOG_BYTES
    from handoff.stores.homes import read_session

    log = tmp_path / "session-state" / "huge" / "events.jsonl"
    log.parent.mkdir(parents=True)
    with open(log, "wb") as file:
        file.truncate(MAX_LOG_BYTES + 1)  # sparse: no disk, and no memory if never read
    found = read_session(tmp_path, "huge")
    assert found.problem and "more than such a file can be" in found.problem


def test_a_registry_row_holding_what_no_tool_wrote_is_listed_with_its_values_unknown(tmp_path):
    """SQLite keeps any value in any column: a time past any date, text where a time goes,
    a count no number of turns is. The listing shows them as unknown (exit 0)."""
    path = tmp_path / "store.db"
    database = connect(sqlite_url(path))
    registry = Registry(database)
    registry.created("good-1", "alice", "host-a", "1.0.102")
    database.execute("INSERT INTO session_registry (session_id, owner, created_at, created_on, runtime_version, turns, "
                     "last_resumed_at) VALUES ('odd-1', 'bob', 1e300, 'h', '1.0.102', 99999999999999999, 'yesterday')")
    database.execute("INSERT INTO session_registry (session_id, owner, created_at, created_on, runtime_version, turns) "
                     "VALUES (X'00ff', 'carol', 'not a time', 7, 8, -1)")
    database.close()
    done = CliRunner().invoke(app, ["sessions", "list", sqlite_url(path)])
    assert done.exit_code == 0, (done.output, done.exception)
    assert "good-1" in done.output and "odd-1" in done.output and "(not text)" in done.output


def test_show_ids_of_a_home_that_is_not_there_says_so_rather_than_failing(tmp_path, monkeypatch):
    from handoff.lab import options as lab_options

    monkeypatch.setattr(lab_options, "DEFAULT_HOME", tmp_path / "no-lab-home-yet")
    code, output = listed("--show-ids")
    assert code == 0 and "holds no sessions yet" in output


def _sessions_written_in_order(home: Path, count: int) -> None:
    """``count`` sessions, ``s0`` written first: their logs' file times say so (a listing
    picks by those, one stat each, before it reads any log)."""
    for number in range(count):
        folder = write_session(home, f"s{number}", event("user.message", f"2026-03-0{number + 1}T10:00:00Z",
                                                         content=f"prompt {number}"))
        os.utime(folder / "events.jsonl", (1_700_000_000 + number, 1_700_000_000 + number))


def test_a_home_of_more_sessions_than_are_listed_reads_only_the_last_written(tmp_path, monkeypatch):
    _sessions_written_in_order(tmp_path, 5)
    listing = home_sessions(tmp_path, limit=2)
    assert [s.session_id for s in listing.sessions] == ["s4", "s3"] and listing.held == 5

    monkeypatch.setattr("handoff.app.sessions.MAX_LISTED", 2)
    code, output = listed(str(tmp_path))
    assert code == 0
    assert output.splitlines()[0].endswith("5 sessions, read from its session-state/ without starting a runtime; "
                                           "listed: the 2 whose log was written last")
    assert "prompt 4" in output and "prompt 2" not in output


def test_a_folder_of_homes_lists_sessions_up_to_the_limit_in_all_and_names_the_homes_past_it(tmp_path, monkeypatch):
    for name in ("a", "b", "c"):
        _sessions_written_in_order(tmp_path / name, 2)
    monkeypatch.setattr("handoff.app.sessions.MAX_LISTED", 3)
    code, output = listed(str(tmp_path))
    assert code == 0
    assert f"Copilot home {tmp_path / 'a'}: 2 sessions" in output
    assert f"Copilot home {tmp_path / 'b'}: 2 sessions, read from its session-state/ without starting a runtime; " \
           f"listed: the 1 whose log was written last" in output
    assert output.rstrip().endswith("Not read: the other 1 home, past the 3 sessions listed; name one to list it.")


def test_a_registry_whose_table_computes_costly_values_is_stopped_and_said_so(tmp_path, monkeypatch):
    """A table can compute its values (a generated column written into the schema by
    hand): each row's costs what its expression does, however few bytes the file holds.
    Reading a store someone gave stops after READ_SECONDS: exit 2, saying why."""
    from handoff.stores.registry import SCHEMA

    path = tmp_path / "store.db"
    computed = SCHEMA.replace("turns INTEGER NOT NULL DEFAULT 0", "n INTEGER, turns INTEGER GENERATED ALWAYS AS (n) VIRTUAL")
    assert computed != SCHEMA
    with contextlib.closing(sqlite3.connect(path)) as database:
        database.execute(computed)
        database.executemany("INSERT INTO session_registry (session_id, owner, created_at, created_on, runtime_version, "
                             "n) VALUES (?, 'o', 1, 'h', '1.0.102', 1)", [(f"s{n}",) for n in range(2_000)])
        database.execute("PRAGMA writable_schema = ON")  # as one can by hand: each row's turns now cost 900 KB
        database.execute("UPDATE sqlite_master SET sql = replace(sql, 'AS (n)', 'AS (length(printf(''%.*c'', "
                         "900000 + n, ''x'')))') WHERE name = 'session_registry'")
        database.commit()
    monkeypatch.setattr("handoff.stores.database.READ_SECONDS", 0.5)
    code, output = listed(str(path))
    assert code == 2 and "took more than" in output and "does a table compute its values?" in output


def test_a_listing_reads_so_many_bytes_of_logs_in_all_and_lists_the_rest_unread(tmp_path, monkeypatch):
    _sessions_written_in_order(tmp_path, 3)
    size = (tmp_path / "session-state" / "s0" / "events.jsonl").stat().st_size
    monkeypatch.setattr("handoff.stores.homes.MAX_READ_BYTES", 2 * size)
    found = {s.session_id: s for s in home_sessions(tmp_path).sessions}
    assert found["s2"].turns == found["s1"].turns == 1 and found["s2"].problem is None  # the last written, read
    assert found["s0"].turns == 0 and "not read: this listing has read" in found["s0"].problem
    assert listed(str(tmp_path))[0] == 0


def test_a_log_that_memory_cannot_hold_is_listed_as_unreadable(tmp_path, monkeypatch):
    from handoff.stores import homes

    _sessions_written_in_order(tmp_path, 1)

    def out_of_memory(path):
        raise MemoryError

    monkeypatch.setattr(homes, "read_events", out_of_memory)
    [session] = home_sessions(tmp_path).sessions
    assert session.problem == "cannot read events.jsonl: more than this process's memory holds"
    assert listed(str(tmp_path))[0] == 0
