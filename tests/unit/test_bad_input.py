"""Every bad input gets one clear line and exit code 2, before anything starts: no
traceback, nothing created (processes, namespaces, links, run directories)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from handoff import leftovers, owners
from handoff.cli import app
from handoff.scenario_files import SCENARIO_DIR

SCENARIO = """title = "t"
proves = "p"
does_not_prove = "d"
{top}
[[steps]]
name = "A"
actions = ["create", "tell", "close"]
{step}
[[steps]]
name = "B"
actions = ["resume", "ask", "close"]
expect = "kept"
"""


def scenario_file(tmp_path: Path, top: str = "", step: str = "", raw: bytes | None = None) -> str:
    path = tmp_path / "bad.toml"
    path.write_bytes(raw if raw is not None else SCENARIO.format(top=top, step=step).encode())
    return str(path)


def step_named(tmp_path: Path, name: str) -> str:
    """A scenario whose first step has this name (TOML escapes in it are read as TOML does)."""
    text = SCENARIO.format(top="", step="").replace('name = "A"', f'name = "{name}"', 1)
    return scenario_file(tmp_path, raw=text.encode())


def named_file(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text(SCENARIO.format(top="", step=""))
    return str(path)


def first_step(tmp_path: Path, fields: str) -> str:
    """A scenario of one step with these fields (its name aside)."""
    return scenario_file(tmp_path, raw=f'title = "t"\nproves = "p"\ndoes_not_prove = "d"\n[[steps]]\nname = "A"\n'
                                       f'{fields}\n'.encode())


def link_to(tmp_path: Path, name: str) -> str:
    (tmp_path / name).write_text("keep me")
    (tmp_path / "link").symlink_to(tmp_path / name)
    return str(tmp_path / "link")


def record_fifo(tmp_path: Path) -> str:
    """A run directory whose run.json is a FIFO: reading it would block for ever."""
    (tmp_path / "r").mkdir()
    os.mkfifo(tmp_path / "r" / "run.json")
    return str(tmp_path / "r")


def stored_run(tmp_path: Path) -> str:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "run.json").write_text("{}")
    return str(tmp_path / "x" / "run.json")


def fifo(tmp_path: Path) -> str:
    os.mkfifo(tmp_path / "fifo")
    return str(tmp_path / "fifo")


def non_empty(tmp_path: Path) -> str:
    (tmp_path / "kept").mkdir(exist_ok=True)
    (tmp_path / "kept" / "something").write_text("x")
    return str(tmp_path / "kept")


# (arguments given the test's tmp_path, a piece of the message that names the input)
CASES = {
    "empty fact": (lambda t: ["run", "same-process", "--fact", " "], "--fact must not be empty"),
    "fact the witness says itself": (lambda t: ["run", "same-process", "--fact", "nothing"], "--fact 'nothing'"),
    "topic with a line break": (lambda t: ["run", "same-process", "--topic", "a\nb"], "--topic: must be one line"),
    "jobs 0": (lambda t: ["run", "same-process", "--jobs", "0"], "--jobs"),
    "store port out of range": (lambda t: ["run", "cross-process-postgres", "--store", "postgresql://h:99999/db"],
                                "port is out of range"),
    "store with a broken IPv6 address": (lambda t: ["run", "cross-process-postgres", "--store", "postgresql://[::1/db"],
                                         "--store"),
    "store of another kind": (lambda t: ["run", "cross-process-postgres", "--store", "mysql://h/db"],
                              "the scheme must be postgres or postgresql"),
    "ssh host port out of range": (lambda t: ["run", "cross-machine-ssh", "--host", "b=ssh://root@h:99999"],
                                   "port is out of range"),
    "ssh host port not a number": (lambda t: ["run", "cross-machine-ssh", "--host", "b=ssh://root@h:22x"],
                                   "port is not a number"),
    "ssh host broken IPv6": (lambda t: ["run", "cross-machine-ssh", "--host", "b=ssh://root@[fe80::1"], "--host b="),
    "provider url port out of range": (lambda t: ["run", "cross-process", "--backend", "openai-compatible", "--model",
                                                  "m", "--provider-url", "http://localhost:99999/v1"],
                                       "port is out of range"),
    "json is a directory": (lambda t: ["run", "same-process", "--json", str(t)], "is a directory"),
    "json in a missing directory": (lambda t: ["run", "same-process", "--json", str(t / "no" / "r.json")],
                                    "does not exist"),
    "keep a non-empty directory": (lambda t: ["run", "same-process", "--keep", non_empty(t)], "is not empty"),
    "keep a file": (lambda t: ["run", "same-process", "--keep", scenario_file(t)], "is not a directory"),
    "faults and names": (lambda t: ["run", "same-process", "--faults"], "--faults runs the fault scenarios"),
    "runs dir is a file": (lambda t: ["run", "same-process", "--runs-dir", scenario_file(t)], "is not a directory"),
    "unknown scenario": (lambda t: ["run", "no-such-scenario"], "unknown scenario 'no-such-scenario'"),
    "scenario not UTF-8": (lambda t: ["run", scenario_file(t, raw=b'title = "\xff"\n')], "is not UTF-8"),
    "scenario with a BOM": (lambda t: ["run", scenario_file(t, raw=b"\xef\xbb\xbf" + SCENARIO.encode())],
                            "byte order mark"),
    "step name that climbs out": (lambda t: ["run", step_named(t, "/../../../../tmp/victim")],
                                  "field 'name' must be 1 to 40 ASCII letters"),
    "step name with a control character": (lambda t: ["run", step_named(t, "A\\u0007")],
                                           "field 'name' must be"),
    "step name not ASCII": (lambda t: ["run", step_named(t, "Schritt-ä")], "field 'name' must be"),
    "step name with a dot": (lambda t: ["run", step_named(t, "..")], "field 'name' must be"),
    "scenario file name with a space": (lambda t: ["run", named_file(t, "my scenario.toml")],
                                        "the file's name (without .toml) is the scenario's name"),
    "wait seconds": (lambda t: ["run", scenario_file(t, step="wait = 3.5")], 'write after = "lease-expired"'),
    "wait nan": (lambda t: ["run", scenario_file(t, step="wait = nan")], "field 'wait' is gone"),
    "after seconds": (lambda t: ["run", scenario_file(t, step="after = 3.5")], "field 'after' must be str"),
    "after unknown": (lambda t: ["run", scenario_file(t, step='after = "3s"')],
                      "field 'after' must be one of lease-expired"),
    "after a lease, raw": (lambda t: ["run", scenario_file(t, step='after = "lease-expired"')],
                           "leases are the guard's; set guarded = true"),
    "order huge": (lambda t: ["run", scenario_file(t, top="order = 1000000000")], "field 'order'"),
    "session id that is a path": (lambda t: ["run", scenario_file(t, top='session_id = "../../tmp/x/escape"')],
                                  "field 'session_id' must be"),
    "unknown tool": (lambda t: ["run", scenario_file(t, step='tools = ["grep"]')], "field 'tools' has unknown tool"),
    "principal with a space": (lambda t: ["run", scenario_file(t, step='principal = "a b"')], "field 'principal'"),
    "host name with a slash": (lambda t: ["run", scenario_file(t, top='[hosts]\n"a/b" = "namespace"')], "hosts:"),
    "witness port out of range": (lambda t: ["witness", "--port", "99999"], "--port"),
    "witness evidence is a directory": (lambda t: ["witness", "--evidence", str(t)], "--evidence"),
    "sessions of a file that is not a database": (lambda t: ["sessions", "list", "--store", "sqlite:///etc/passwd"],
                                                  "cannot open the SQLite store /etc/passwd"),
    "sessions of a store that is not there": (lambda t: ["sessions", "list", "--store", f"sqlite:///{t}/typo.db"],
                                              "no SQLite store at"),
    "lab id that is a path": (lambda t: ["lab", "--home", str(t), "--session-id", "../x"], "--session-id: an id is"),
    "lab fact the witness says itself": (lambda t: ["lab", "--home", str(t), "--fact", "nothing"], "--fact 'nothing'"),
    "report of no such run": (lambda t: ["report", "nope", "--runs-dir", str(t)], "no stored run"),
    "resupply of no such run": (lambda t: ["resupply", "nope", "--runs-dir", str(t)], "no stored run"),
    "report in an unknown format": (lambda t: ["report", "--format", "xml", "--runs-dir", str(t)], "--format xml"),
    "scenario nested too deeply": (lambda t: ["run", scenario_file(t, raw=b"x = " + b"[" * 3000 + b"]" * 3000)],
                                   "nested too deeply"),
    "provider url with a space": (lambda t: ["run", "cross-process", "--backend", "openai-compatible", "--model", "m",
                                             "--provider-url", "http://a b/v1"], "percent-encode it"),
    "provider url with a line break": (lambda t: ["lab", "--home", str(t), "--backend", "openai-compatible", "--model",
                                                  "m", "--provider-url", "http://a/v1\nx"], "percent-encode it"),
    "model with a line break": (lambda t: ["run", "cross-process", "--model", "a\nb"], "--model: must be one line"),
    "fact with a line separator": (lambda t: ["run", "same-process", "--fact", "At\u2028Risk"],
                                   "--fact: must be one line"),
    "fact with a zero-width space": (lambda t: ["run", "same-process", "--fact", "At\u200bRisk"], "U+200B"),
    "topic with a bidi override": (lambda t: ["run", "same-process", "--topic", "abc\u202edef"], "U+202E"),
    "fact with a next-line character": (lambda t: ["lab", "--home", str(t), "--fact", "At\x85Risk"],
                                        "--fact: must be one line"),
    "keep where nothing can be made": (lambda t: ["run", "same-process", "--keep", "/proc/keep"],
                                      "--keep /proc/keep: cannot be written under /proc"),
    "lab runs dir where nothing can be made": (lambda t: ["lab", "--home", str(t / "h"), "--runs-dir", "/proc/runs"],
                                               "--runs-dir /proc/runs: cannot be written under /proc"),
    "runs dir that is a file, for reading": (lambda t: ["runs", "--runs-dir", "/etc/hostname"], "is not a directory"),
    "sessions of a place that cannot be read": (lambda t: ["sessions", "list", "/proc"], "/proc: cannot be read"),
    "scenario path that is a directory": (lambda t: ["run", str(t)], "is a directory; give a scenario's .toml file"),
    "scenario path that is a FIFO": (lambda t: ["export", "k8s", fifo(t)], "is not a regular file"),
    "scenario path that is not there": (lambda t: ["run", str(t / "typo.toml")], "typo.toml: no such file"),
    "lab resume in a place that is no Copilot home": (lambda t: ["lab", "--home", str(t), "--resume", "sdklabs-1"],
                                                      "is no Copilot home"),
    "lab resume-most-recent in a home with none": (lambda t: ["lab", "--home", str(t), "--resume-most-recent"],
                                                   "no stored sessions in"),
    "a scenario named twice": (lambda t: ["run", "cross-process", "cross-process"], "is named twice"),
    "a first step that resumes what nobody made": (lambda t: ["run", first_step(t, 'actions = ["resume", "ask"]\n'
                                                                                   'expect = "kept"')],
                                                   "the first step has no earlier step"),
    "a first step that copies a home": (lambda t: ["run", first_step(t, 'actions = ["create", "tell", "close"]\n'
                                                                        'home = "copied"')],
                                        "is 'copied' on the first step"),
    "an empty title": (lambda t: ["run", scenario_file(t, raw=SCENARIO.format(top="", step="").replace(
        'title = "t"', 'title = "  "').encode())], "field 'title' is empty"),
    "a title over two lines": (lambda t: ["run", scenario_file(t, raw=SCENARIO.format(top="", step="").replace(
        'title = "t"', 'title = "a\\u2028b"').encode())], "field 'title' must be one line"),
    "export over a scenario named by name": (lambda t: ["export", "k8s", "cross-process", "-o",
                                                        str(SCENARIO_DIR / "cross-process.toml")], "which the tool reads"),
    "skew json over a stored run": (lambda t: ["skew", "--runs-dir", str(t), "--json", stored_run(t)],
                                    "which the tool reads"),
    "witness evidence through a link": (lambda t: ["witness", "--evidence", link_to(t, "victim")],
                                        "a link is never followed"),
    "sessions of a URL with a broken IPv6 host": (lambda t: ["sessions", "list", "postgresql://u@[::1/db"],
                                                  "must hold an IPv6 address"),
    "a store nobody answers at": (lambda t: ["run", "cross-process-postgres", "--store", "postgresql://u@127.0.0.1:1/db"],
                                  "--store: cannot connect to PostgreSQL at 127.0.0.1:1"),
    "report of a run whose record is a FIFO": (lambda t: ["report", record_fifo(t)], "is not a regular file"),
    "a host given twice": (lambda t: ["run", "cross-machine-ssh", "--host", "b=ssh://root@h1", "--host",
                                      "b=ssh://root@h2"], "--host b: given twice"),
    "a store no chosen scenario uses": (lambda t: ["run", "cross-process", "--store", "postgresql://u@h/db"],
                                        "--store: none of the chosen scenarios"),
    "an image that is not one": (lambda t: ["export", "k8s", "cross-process", "--image", "a\nb"],
                                 "not an image reference"),
    # what no command can use, refused at the one door (handoff/cli.py)
    "an empty value": (lambda t: ["run", "same-process", "--runs-dir", ""], "--runs-dir: the value is empty"),
    "an empty --option=": (lambda t: ["witness", "--host="], "--host: the value is empty"),
    "a value that is not UTF-8": (lambda t: ["run", "same-process", "--fact", "At\udcffRisk"],
                                  "--fact At\\xffRisk: is not UTF-8 text"),
    "a path that is not UTF-8": (lambda t: ["lab", "--home", str(t / "\udcffhome")], "is not UTF-8 text"),
    # outputs are renamed into place: nothing may be there that the rename would destroy
    "json onto a device": (lambda t: ["run", "same-process", "--json", "/dev/null"], "is not a regular file"),
    "json onto a FIFO": (lambda t: ["run", "same-process", "--json", fifo(t)], "is not a regular file"),
    "json over the scenario it runs": (lambda t: ["run", scenario_file(t), "--json", str(t / "bad.toml")],
                                       "which the tool reads"),
    "json and html in one file": (lambda t: ["run", "same-process", "--json", str(t / "r"), "--html", str(t / "r")],
                                  "--json and --html name the same file"),
    "report over a stored run": (lambda t: ["report", "x", "--runs-dir", str(t), "-o", stored_run(t)],
                                 "which the tool reads"),
    "export over its scenario": (lambda t: ["export", "k8s", scenario_file(t), "-o", str(t / "bad.toml")],
                                 "which the tool reads"),
    "output where no file can be made": (lambda t: ["export", "k8s", "same-process", "-o", "/proc/version"],
                                         "no file can be made in /proc"),
    "witness evidence where no file can be made": (lambda t: ["witness", "--evidence", "/proc/version"],
                                                   "no file can be made in /proc"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, case):
    arguments, says = CASES[case]
    # this process's run directories only (CliRunner runs here): other checkouts' come and go
    mine = f"{owners.RUN_DIR_PREFIX}{owners.tag()}-*"
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob(mine))
    result = CliRunner().invoke(app, arguments(tmp_path))
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob(mine)) == before
    assert leftovers.find(of=os.getpid()) == []
    assert not (tmp_path / "typo.db").exists()
    assert Path("/dev/null").is_char_device()


def not_a_runtime(tmp_path: Path) -> dict[str, str]:
    fake = tmp_path / "copilot"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    return {"COPILOT_CLI_PATH": str(fake)}


# (the environment given the test's tmp_path, a piece of the message[, more arguments])
ENVIRONMENTS = {
    "a relative HOME": (lambda t: {"HOME": "relhome"}, "HOME=relhome: is a relative path"),
    "a runs directory not in UTF-8": (lambda t: {"HANDOFF_RUNS_DIR": "/tmp/x\udcff"}, "is not UTF-8 text"),
    "a TMPDIR that is a file": (lambda t: {"TMPDIR": "/etc/hostname"}, "TMPDIR=/etc/hostname: is not a directory"),
    "a Copilot token on two lines": (lambda t: {"COPILOT_GITHUB_TOKEN": "abc\ndef"}, "no HTTP header can carry",
                                     ("--backend", "copilot")),
    "no setpriv on the PATH": (lambda t: {"PATH": str(t)}, "setpriv is not on the PATH"),
    "COPILOT_CLI_PATH at something that is not a runtime": (not_a_runtime, "does not answer `--version`"),
}


@pytest.mark.parametrize("command", [["run", "cross-process"], ["lab", "--home", "{home}"]])
@pytest.mark.parametrize("case", ENVIRONMENTS, ids=list(ENVIRONMENTS))
def test_an_environment_the_run_cannot_work_in_is_bad_input_before_anything_starts(tmp_path, monkeypatch, command,
                                                                                   case):
    environment, says, *more = ENVIRONMENTS[case]
    for name, value in environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    extra = list(more[0]) if more else []
    result = CliRunner().invoke(app, [part.format(home=tmp_path / "home") for part in command] + extra)
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert leftovers.find(of=os.getpid()) == [] and not (tmp_path / "home").exists()


@pytest.mark.parametrize("command", [["run", "cross-process"], ["lab", "--home", "{home}"]])
def test_a_key_no_http_header_can_carry_is_bad_input_and_not_shown(tmp_path, monkeypatch, command):
    monkeypatch.setenv("HANDOFF_TEST_KEY", "sk-secret\nsecond-line")
    result = CliRunner().invoke(app, [part.format(home=tmp_path / "home") for part in command] + [
        "--backend", "openai-compatible", "--model", "m", "--provider-url", "http://127.0.0.1:9/v1",
        "--api-key-env", "HANDOFF_TEST_KEY"])
    assert result.exit_code == 2, result.output
    assert "--api-key-env HANDOFF_TEST_KEY: the key in it holds" in result.output and "sk-secret" not in result.output
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("command", [["run", "same-process"], ["lab", "--home", "{home}"]])
def test_a_tmpdir_that_is_not_there_is_bad_input_before_anything_starts(tmp_path, monkeypatch, command):
    """Python falls back to /tmp without a word; the runtime does not, and every session
    it creates fails: one line and exit 2 instead, before a process starts."""
    missing = tmp_path / "no-such-dir"
    monkeypatch.setenv("TMPDIR", str(missing))
    result = CliRunner().invoke(app, [part.format(home=tmp_path / "home") for part in command])
    assert result.exit_code == 2, result.output
    assert f"TMPDIR={missing}: no such directory; create it, or unset TMPDIR" in result.output
    assert leftovers.find(of=os.getpid()) == []
