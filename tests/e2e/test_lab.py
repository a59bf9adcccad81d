"""`handoff lab` as a learner runs it: the real CLI in its own process, the real runtime,
the real witness (or a separately started endpoint that wants a key). Every lab run is a
new process, so a `--resume` run really crosses a process boundary."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from handoff.fact import Fact

pytestmark = pytest.mark.e2e

ID = re.compile(r"sdklabs-[0-9a-f]{16}")
TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")


# Every lab run of this module carries this variable; its witness and runtime inherit it,
# which tells them apart from the processes of other runs on the same machine.
MARK = "HANDOFF_LAB_TEST_RUN"
RUN_MARK = uuid.uuid4().hex


def lab(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "handoff", "lab", "--home", str(home), *args],
                          capture_output=True, text=True, timeout=120, env={**(env or os.environ), MARK: RUN_MARK})


def started_by_these_tests() -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["pid", "status"]):
        with contextlib.suppress(psutil.Error):
            if process.info["status"] != psutil.STATUS_ZOMBIE and process.environ().get(MARK) == RUN_MARK:
                found.append(process)
    return found


def session_id(done: subprocess.CompletedProcess) -> str:
    return next(line for line in done.stdout.splitlines() if line.startswith("Session id: ")).removeprefix("Session id: ")


def events(home: Path, sid: str) -> list[dict]:
    path = home / "session-state" / sid / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def nothing_left_behind():
    """Every lab run removes the witness and the runtime it started."""
    yield
    assert started_by_these_tests() == []


def test_transcript_has_the_labs_shape_line_by_line_and_nothing_is_left_in_tmpdir(tmp_path):
    """Its runtime keeps Node's compile cache with the tool's other runtimes, not in TMPDIR
    (Node's default), where it grew with every checkout path and runtime version."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    home = tmp_path / "home"
    done = lab(home, env={**os.environ, "TMPDIR": str(scratch)})
    assert sorted(path.name for path in scratch.iterdir()) == []
    assert done.returncode == 0, done.stderr
    assert done.stderr.lstrip().startswith("This lab run proved")  # and nothing else: no warning
    sid = session_id(done)
    assert ID.fullmatch(sid) and len(sid) == 24
    assert done.stdout.splitlines() == [
        "== Lab 05: sessions ==",
        "",
        "Model: claude-haiku-4.5",  # from list_models, as the lab's sample picks it
        f"Session id: {sid}",
        "",
        "--- Turn 1 (new session) ---",
        "You: Remember this: my favourite retail segment is 'At Risk'. Reply with just OK.",
        "Assistant: OK",
        "",
        "Session closed.",
        "",
        "--- Turn 2 (resumed session) ---",
        "You: Which retail segment did I say was my favourite?",
        "Assistant: Your favourite retail segment is 'At Risk'.",
        "",
        "--- Session metadata ---",
        f"  id={sid} metadata retrieved",
    ]
    # Turn 1 was closed before turn 2 resumed it: the event log says so.
    kinds = [e["type"] for e in events(home, sid)]
    assert kinds.index("session.shutdown") < kinds.index("session.resume")


def test_resume_in_a_second_process_remembers_the_fact(tmp_path):
    first = lab(tmp_path)
    assert first.returncode == 0, first.stderr
    sid = session_id(first)

    second = lab(tmp_path, "--resume", sid)  # a new process, a new runtime, a new witness
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [
        "== Lab 05: sessions ==",
        "",
        "Model: claude-haiku-4.5",  # from list_models, as the lab's sample picks it
        f"Session id: {sid}",
        "",
        "--- Turn 2 (resumed session) ---",
        "You: Which retail segment did I say was my favourite?",
        "Assistant: Your favourite retail segment is 'At Risk'.",
        "",
        "--- Session metadata ---",
        f"  id={sid} metadata retrieved",
    ]
    # After the transcript, on stderr: what the run proved, and what it leaves to the ladder.
    said = " ".join(second.stderr.split())
    assert "This lab run proved that a session resumes by id in a second process, from the same home" in said
    assert "It does not prove a handoff to another machine" in said and "`make handoff` runs those rungs" in said
    assert "after close, in the same process" in " ".join(first.stderr.split())


def test_a_stable_id_twice(tmp_path):
    first = lab(tmp_path, "--session-id", "analyst-demo")
    second = lab(tmp_path, "--session-id", "analyst-demo")
    for done in (first, second):
        assert done.returncode == 0, done.stderr
        assert session_id(done) == "analyst-demo"
        assert "Assistant: Your favourite retail segment is 'At Risk'." in done.stdout
        assert "  id=analyst-demo metadata retrieved" in done.stdout
    assert "already stored" not in first.stdout
    assert "Note: this id is already stored here; create_session does not continue it" in second.stdout
    # One events.jsonl, two conversations started in it (docs/lab.md: 'A finding that corrects the lab').
    assert [e["type"] for e in events(tmp_path, "analyst-demo")].count("session.start") == 2


def test_third_turn_resumes_again_after_the_metadata(tmp_path):
    done = lab(tmp_path, "--third-turn")
    assert done.returncode == 0, done.stderr
    sid = session_id(done)
    assert done.stdout.splitlines()[-7:] == [
        "",
        "--- Session metadata ---",
        f"  id={sid} metadata retrieved",
        "",
        "--- Turn 3 (resumed again, after metadata) ---",
        "You: Which retail segment did I say was my favourite?",
        "Assistant: Your favourite retail segment is 'At Risk'.",
    ]
    assert [e["type"] for e in events(tmp_path, sid)].count("session.resume") == 2


def test_resume_most_recent_picks_the_newest_stored_session(tmp_path):
    older = lab(tmp_path, "--session-id", "older-session", "--fact", "Hibernating")
    newer = lab(tmp_path, "--fact", "Loyal")
    assert older.returncode == newer.returncode == 0
    done = lab(tmp_path, "--resume-most-recent", "--fact", "Loyal")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Stored sessions: 2 (list_sessions); resuming the most recent" in lines
    assert session_id(done) == session_id(newer)
    assert "Assistant: Your favourite retail segment is 'Loyal'." in lines
    assert "Turn 1" not in done.stdout


def test_resume_most_recent_with_nothing_stored_is_bad_input(tmp_path):
    done = lab(tmp_path, "--resume-most-recent")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: no stored sessions in ")


def test_unknown_id_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "session-state").mkdir()  # a Copilot home without that id: the runtime's answer is shown
    done = lab(tmp_path, "--resume", "never-created-id")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: Session not found: never-created-id")
    assert "Traceback" not in done.stderr


def test_another_fact_changes_the_answer(tmp_path):
    done = lab(tmp_path, "--fact", "Champions")
    assert done.returncode == 0, done.stderr
    assert "Assistant: Your favourite retail segment is 'Champions'." in done.stdout
    assert "At Risk" not in done.stdout
    other = Fact("Ünï 'quoted' value", "customer tier")
    done = lab(tmp_path, "--fact", other.value, "--topic", other.topic)
    assert done.returncode == 0, done.stderr
    assert f"You: {other.remember_prompt}" in done.stdout
    assert other.is_in(done.stdout.splitlines()[13])


def test_an_answer_without_the_fact_exits_1(tmp_path):
    """Asked about a topic turn 1 never mentioned, the model cannot name the value: the
    lab says so on stderr and exits 1 instead of claiming success."""
    first = lab(tmp_path)
    done = lab(tmp_path, "--resume", session_id(first), "--topic", "store region")
    assert done.returncode == 1
    assert "I don't know" in done.stdout
    assert "the answer does not name 'At Risk'" in done.stderr


# --- openai-compatible: a separately started endpoint that requires an API key ---------

def test_openai_compatible_endpoint_gets_url_key_and_model(tmp_path, keyed_endpoint):
    url, key, evidence = keyed_endpoint
    home = tmp_path / "home"
    env = {**os.environ, "LAB_TEST_KEY": key}
    options = ("--backend", "openai-compatible", "--provider-url", url, "--model", "my-local-model",
               "--api-key-env", "LAB_TEST_KEY")
    first = lab(home, *options, env=env)
    assert first.returncode == 0, first.stderr
    assert "Model: my-local-model" in first.stdout
    assert "Assistant: Your favourite retail segment is 'At Risk'." in first.stdout
    sid = session_id(first)
    # The provider is not stored with the session: the second process passes it again.
    second = lab(home, *options, "--resume", sid, env=env)
    assert second.returncode == 0, second.stderr
    assert "Assistant: Your favourite retail segment is 'At Risk'." in second.stdout

    seen = [json.loads(line) for line in evidence.read_text().splitlines()]
    assert len(seen) >= 3 and {record["model"] for record in seen} == {"my-local-model"}
    assert events(home, sid)[0]["data"]["selectedModel"] == "my-local-model"
    assert key not in first.stdout + first.stderr + second.stdout + second.stderr


def test_openai_compatible_wrong_key_is_a_clear_error(tmp_path, keyed_endpoint):
    url, key, _ = keyed_endpoint
    wrong = "sk-test-wrong-key-0000"
    done = lab(tmp_path, "--backend", "openai-compatible", "--provider-url", url, "--model", "m",
               "--api-key-env", "LAB_TEST_KEY", env={**os.environ, "LAB_TEST_KEY": wrong})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: turn 1: the endpoint {url} refused the API key from $LAB_TEST_KEY (HTTP 401): "
        "check that variable's value (it is not shown)"
    ]
    assert "Traceback" not in done.stderr
    assert wrong not in done.stdout + done.stderr and key not in done.stdout + done.stderr


def test_openai_compatible_without_a_key_says_to_pass_one(tmp_path, keyed_endpoint):
    url, _, _ = keyed_endpoint
    done = lab(tmp_path, "--backend", "openai-compatible", "--provider-url", url, "--model", "m")
    assert done.returncode == 2
    assert "wants an API key (HTTP 401): pass --api-key-env VAR" in done.stderr


# --- copilot: offline here, so only the configuration and its errors -------------------

def _without_tokens() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in TOKEN_VARIABLES}


def test_copilot_without_a_token_says_how_to_provide_one(tmp_path):
    done = lab(tmp_path, "--backend", "copilot", env=_without_tokens())
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "needs a GitHub token: set COPILOT_GITHUB_TOKEN (or GH_TOKEN / GITHUB_TOKEN)" in done.stderr


@pytest.mark.parametrize("variable", TOKEN_VARIABLES)
def test_copilot_token_never_appears_in_output(tmp_path, variable):
    """A bad option stops the run before the service would be reached (this machine is
    offline); the token must not be echoed on the way, nor by `--help` or `doctor`."""
    token = "github_pat_FAKE0123456789abcdef"
    env = {**_without_tokens(), variable: token}
    for args in (("--backend", "copilot", "--resume", "../not-an-id"),
                 ("--backend", "copilot", "--api-key-env", "X"),
                 ("--help",)):
        done = lab(tmp_path, *args, env=env)
        assert token not in done.stdout + done.stderr
    assert done.returncode == 0  # --help
    doctor = subprocess.run([sys.executable, "-m", "handoff", "doctor"], capture_output=True, text=True, env=env, timeout=60)
    assert f"token present in ${variable}" in doctor.stdout
    assert token not in doctor.stdout + doctor.stderr


# --- interrupted mid-turn -----------------------------------------------------------------

@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_mid_turn_stops_everything(tmp_path, signal_number):
    """An endpoint that accepts connections and never answers keeps turn 1 waiting, so the
    signal lands while the runtime is busy; nothing the lab started may outlive it."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        process = subprocess.Popen(
            [sys.executable, "-m", "handoff", "lab", "--home", str(tmp_path), "--backend", "openai-compatible",
             "--provider-url", url, "--model", "m"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, MARK: RUN_MARK},
        )
        try:
            for line in process.stdout:
                if line.startswith("You: "):
                    break
            assert any("copilot" in " ".join(p.cmdline()) for p in started_by_these_tests())
            process.send_signal(signal_number)
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == 130, stderr
    assert stderr.strip() == "error: interrupted; the witness model and the runtime were stopped"


# --- the lab's resume_session call forms ---------------------------------------------------

FORMS = ("resume_session(session_id)", 'resume_session(session_id, model="gpt-5")',
         "resume_session(session_id, streaming=False)")
# What each form did on the Copilot API's path: each answer named the fact, and the request
# asked the session's own model, also where the form named one the service does not list.
FORMS_ON_THE_API = {
    FORMS[0]: "the request asked for model claude-haiku-4.5, the one the session was created with",
    FORMS[1]: "the form named model gpt-5, which the service does not list (auto, claude-haiku-4.5, gpt-5-mini); "
              "the request asked for claude-haiku-4.5, the one the session was created with, and nothing said so",
    FORMS[2]: "the request asked for model claude-haiku-4.5, the one the session was created with",
}


def _forms(done: subprocess.CompletedProcess) -> dict[str, str]:
    """Each form's heading -> what the lab said it did, once its answer named the fact."""
    said, lines = {}, done.stdout.splitlines()
    for form in FORMS:
        at = lines.index(f"--- {form} ---")
        assert lines[at + 1] == f"You: {Fact().question_prompt}" and Fact().is_in(lines[at + 2]), lines[at:at + 3]
        said[form] = " ".join(line.strip() for line in lines[at + 3:at + 5] if line.startswith("  "))
    return said


def test_each_of_the_lab_s_resume_forms_resumes_and_says_which_model_the_request_asked_for(tmp_path):
    done = lab(tmp_path / "home", "--resume-forms")
    assert done.returncode == 0, done.stderr
    assert _forms(done) == FORMS_ON_THE_API


def test_on_byok_a_model_a_resume_names_is_asked_for_and_stays_with_the_session(tmp_path):
    done = lab(tmp_path / "home", "--resume-forms", "--backend", "witness-byok")
    assert done.returncode == 0, done.stderr
    assert _forms(done) == {
        FORMS[0]: "the request asked for model handoff-witness, the one the session was created with",
        FORMS[1]: "the request asked for model gpt-5, as the form named it",
        FORMS[2]: "the request asked for model gpt-5, not the one the session was created with (handoff-witness): "
                  "the model an earlier resume named stayed with the session",
    }


# --- on the lab's own SDK and runtime --------------------------------------------------------

LAB_SDK = "1.0.9"  # the seed's pyproject.toml pins it; it pins runtime 1.0.78


def _lab_sdk_missing() -> str | None:
    from handoff.errors import UserError
    from handoff.lab.other_sdk import lab_process

    try:
        lab_process(LAB_SDK)
    except UserError as missing:
        return str(missing)
    return None


needs_lab_sdk = pytest.mark.skipif(_lab_sdk_missing() is not None, reason=f"{_lab_sdk_missing()} (make runtimes)")


@needs_lab_sdk
def test_the_lab_on_its_own_sdk_and_runtime_prints_its_transcript_and_is_stored_with_them(tmp_path):
    runs = tmp_path / "runs"
    done = lab(tmp_path / "home", "--sdk", LAB_SDK, "--runs-dir", str(runs), "--resume-forms")
    assert done.returncode == 0, done.stderr
    assert _forms(done) == FORMS_ON_THE_API, done.stdout
    assert "On SDK 1.0.9 with runtime 1.0.78, the pair that SDK pins" in done.stderr
    said = done.stdout.splitlines()
    assert said[0] == "== Lab 05: sessions ==" and "--- Turn 2 (resumed session) ---" in said
    assert Fact().is_in(said[said.index("--- Turn 2 (resumed session) ---") + 2])
    listed = subprocess.run([sys.executable, "-m", "handoff", "runs", "--runs-dir", str(runs)], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert "1.0.9 / 1.0.78" in listed.stdout, listed.stdout


@needs_lab_sdk
@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_the_lab_on_another_sdk_stops_its_process_and_all_it_started(tmp_path, signal_number):
    with socket.socket() as silent:  # turn 1 waits on it, so the signal lands mid-turn
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        process = subprocess.Popen(
            [sys.executable, "-m", "handoff", "lab", "--home", str(tmp_path), "--sdk", LAB_SDK, "--backend",
             "openai-compatible", "--provider-url", url, "--model", "m"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, MARK: RUN_MARK},
        )
        try:
            for line in process.stdout:
                if line.startswith("You: "):
                    break
            running = " ".join(" ".join(p.cmdline()) for p in started_by_these_tests())
            assert "handoff.lab.child" in running and "1.0.78" in running, running
            process.send_signal(signal_number)  # to the tool alone: it stops its child
            _, stderr = process.communicate(timeout=90)
        finally:
            process.kill()
    assert process.returncode == 130, stderr
    assert stderr.strip().endswith("error: interrupted; the witness model and the runtime were stopped"), stderr


def test_a_secret_shaped_id_is_accepted_as_the_raw_sdk_would_but_never_printed(tmp_path):
    token = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    done = lab(tmp_path, "--session-id", token)
    assert done.returncode == 0, done.stderr
    assert token not in done.stdout + done.stderr
    assert "Session id: (not shown: it looks like a GitHub token)" in done.stdout
    assert "warning: the --session-id given looks like a GitHub token" in done.stderr
    assert (tmp_path / "session-state" / token).is_dir()  # the raw runtime did store it under that name


CALL = re.compile(r"^  sdk: (?P<call>\S+)\(.*\[pid (?P<pid>\d+) on (?P<host>\S+)\]$")


def test_show_calls_names_each_sdk_call_with_its_process_and_a_resume_names_the_creating_one(tmp_path):
    """--show-calls: beside each turn the SDK call that made it, with the pid and host of
    the process that called. A --resume run is another process, and says which one created
    the session (from the stored runs). Resumed with a value it was never told, the lab
    says the answer named the value the session was told, rather than that it lost turn 1."""
    sid = f"show-calls-{uuid.uuid4().hex[:8]}"
    page = tmp_path / "lab.html"
    first = lab(tmp_path, "--session-id", sid, "--show-calls", "--html", str(page))
    assert first.returncode == 0, first.stderr
    drawn = page.read_text(encoding="utf-8")  # the lab's calls as a diagram, made by one process
    assert 'data-lane="worker:lab"' in drawn and "the lab&#39;s process" in drawn and 'data-lane="coordinator"' not in drawn
    assert drawn.count('data-fact="seen"') == 2 and f"create_session(session_id={sid[:17]}" in drawn
    calls = [CALL.match(line) for line in first.stdout.splitlines() if line.startswith("  sdk: ")]
    assert all(calls)
    assert [c["call"] for c in calls] == [
        "client.get_session_metadata", "client.create_session", "session.send_and_wait", "session.disconnect",
        "client.resume_session", "session.send_and_wait", "session.disconnect", "client.get_session_metadata"]
    assert len({(c["pid"], c["host"]) for c in calls}) == 1  # one process made every call
    creator_pid = calls[0]["pid"]
    # The lab's path: the client has no arguments, and a resume is given no model.
    assert f"client.create_session(session_id='{sid}', model='claude-haiku-4.5')   [pid" in first.stdout
    assert f"client.resume_session('{sid}')   [pid" in first.stdout
    # The transcript itself is the lab's: the calls are extra lines, nothing else changed.
    plain = [line for line in first.stdout.splitlines() if not line.startswith("  sdk: ")]
    assert plain[5:] == ["--- Turn 1 (new session) ---",
                         "You: Remember this: my favourite retail segment is 'At Risk'. Reply with just OK.",
                         "Assistant: OK", "", "Session closed.", "", "--- Turn 2 (resumed session) ---",
                         "You: Which retail segment did I say was my favourite?",
                         "Assistant: Your favourite retail segment is 'At Risk'.", "", "--- Session metadata ---",
                         f"  id={sid} metadata retrieved"]

    second = lab(tmp_path, "--resume", sid, "--show-calls", "--fact", "Champions")
    resumed = [CALL.match(line) for line in second.stdout.splitlines() if line.startswith("  sdk: ")]
    assert [c["call"] for c in resumed] == ["client.resume_session", "session.send_and_wait", "session.disconnect",
                                            "client.get_session_metadata"]
    resumer_pid = resumed[0]["pid"]
    assert resumer_pid != creator_pid
    created = next(line for line in second.stdout.splitlines() if line.startswith("  created by: "))
    assert created.startswith(f"  created by: pid {creator_pid} on ") and \
        created.endswith(f"this resume is pid {resumer_pid} on {resumed[0]['host']}: a different process")
    assert second.returncode == 1
    assert second.stderr.strip() == ("turn 2: the answer names 'At Risk', which this session was told in an earlier "
                                     "run, not 'Champions' (--fact): the context was carried; give --fact 'At Risk' "
                                     "to check for it")


def test_another_model_from_the_list_is_used_and_one_not_listed_is_named_with_those_that_are(tmp_path):
    chosen = lab(tmp_path, "--model", "gpt-5-mini")
    assert chosen.returncode == 0, chosen.stderr
    assert "Model: gpt-5-mini" in chosen.stdout.splitlines()
    unknown = lab(tmp_path, "--model", "no-such-model")
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == ("error: --model no-such-model: the service offers no such model; it offers "
                                      "claude-haiku-4.5, gpt-5-mini")


def test_witness_byok_keeps_the_byok_lab_the_provider_passed_on_every_resume(tmp_path):
    sid = f"byok-{uuid.uuid4().hex[:8]}"
    done = lab(tmp_path, "--backend", "witness-byok", "--session-id", sid, "--show-calls")
    assert done.returncode == 0, done.stderr
    assert "Model: handoff-witness" in done.stdout.splitlines()
    for call in (f"client.create_session(session_id='{sid}', ", f"client.resume_session('{sid}', "):
        assert f"{call}model='handoff-witness', provider=" in done.stdout
    assert "api_key': …}" in done.stdout and "handoff-witness-needs-no-key" not in done.stdout


def test_sessions_list_reads_the_session_a_lab_run_left_in_its_home(tmp_path):
    """After `handoff lab --home DIR`, `handoff sessions list DIR` lists the lab's session
    from the runtime's own files (no runtime started), and the run the lab stored names
    the same session and the home that still holds it."""
    home, runs_dir = tmp_path / "home", tmp_path / "runs"
    done = lab(home, env={**os.environ, "HANDOFF_RUNS_DIR": str(runs_dir)})
    assert done.returncode == 0, done.stderr
    sid = session_id(done)

    def sessions_list(*where: str) -> list[str]:
        listed = subprocess.run([sys.executable, "-m", "handoff", "sessions", "list", *where, "--runs-dir",
                                 str(runs_dir)], capture_output=True, text=True, timeout=60,
                                env={**os.environ, "COLUMNS": "1000"})  # a line each: the rows are read
        assert listed.returncode == 0, listed.stderr
        return listed.stdout.splitlines()

    first, _, _, row = sessions_list(str(home))
    assert first == f"Copilot home {home}: 1 session, read from its session-state/ without starting a runtime"
    kinds = [e["type"] for e in events(home, sid)]
    assert kinds[-1] == "session.shutdown" and kinds.count("user.message") == 2
    assert row.split()[0] == sid
    assert row.split()[5:9] == ["2", "yes", "runtime", events(home, sid)[0]["data"]["copilotVersion"]]
    assert "Remember this: my favourite retail segm…" in row

    [run_id] = [p.name for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]
    stored = sessions_list(run_id)
    assert stored[0].startswith(f"Run {run_id} (`handoff lab`, ")
    assert stored[3].split()[:2] == ["lab", sid]
    assert stored[-1] == f"Their files are still in {home}: `handoff sessions list {home}` reads them."

