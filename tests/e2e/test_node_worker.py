"""Protocol conformance: the Python worker and the Node.js worker (sdks/node/worker.mjs), each
driving the real pinned runtime against the real witness, write only lines the protocol's
JSON Schema (handoff/protocol.schema.json, generated from protocol.py) accepts; and a
session one of them made, the other resumes through a shared home, with the same evidence."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import msgspec
import pytest

from handoff import protocol_schema, versions
from handoff.eventlog import events_path, report
from handoff.hosts.base import USER_DIRS, worker_env
from handoff.protocol import ActionDone, ActionFailed, EventLog, Finished, Ready, Skipped, Turn, WorkerSpec, decode
from handoff.runtime_locator import PROJECT_ROOT, locate_runtime
from handoff.stores.database import connect, sqlite_url
from handoff.stores.files import SessionFiles
from handoff.stores.registry import Registry
from handoff.witness.evidence import read_evidence
from handoff.witness.tags import request_tags
from handoff.words import SdkLanguage

from tests.e2e.conftest import OTHER_FACT

NODE_WORKER = PROJECT_ROOT / "sdks" / "node"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not (NODE_WORKER / "node_modules" / ".installed").is_file(),
    reason="the Node.js worker is not installed: install Node.js 20+ and run `make setup`")

COMMANDS = {SdkLanguage.PYTHON: (sys.executable, "-m", "handoff.worker"),
            SdkLanguage.NODE: (NODE, str(NODE_WORKER / "worker.mjs"))}


@pytest.fixture(scope="module")
def witness(tmp_path_factory):
    evidence = tmp_path_factory.mktemp("witness") / "evidence.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "handoff.witness", "--evidence", str(evidence)],
                               stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    assert line.startswith("Listening: http://127.0.0.1:")
    yield line.removeprefix("Listening: "), evidence
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def event_schema():
    schema = json.loads(protocol_schema.SCHEMA_FILE.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator({**schema, "anyOf": [{"$ref": "#/$defs/Event"}]})


def run_worker(language: SdkLanguage, spec: WorkerSpec, event_schema) -> list:
    """The worker's events, after checking that every line it wrote is one the schema and
    protocol.decode accept."""
    env = worker_env(user_dir=str(USER_DIRS / "local"))
    if language == SdkLanguage.PYTHON:
        env["PYTHONPATH"] = str(PROJECT_ROOT)
    done = subprocess.run(COMMANDS[language], input=spec.to_json(), capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = done.stdout.decode().splitlines()
    for line in lines:
        event_schema.validate(json.loads(line))  # the contract, as another language sees it
    events = [decode(line) for line in lines]
    assert isinstance(events[-1], Finished), lines
    return events


def spec(step: str, home: Path, witness_url: str, actions: tuple[str, ...], session_id: str | None = None,
         **fields) -> WorkerSpec:
    return WorkerSpec(
        scenario="node-conformance", step=step, host="local", runtime_path=str(locate_runtime()), home=str(home),
        witness_url=witness_url, fact_value=OTHER_FACT.value, fact_topic=OTHER_FACT.topic, actions=actions,
        session_id=session_id, tags=request_tags("node-conformance", step, "local", OTHER_FACT), **fields)


def of(events: list, kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def sent_the_fact(evidence: Path, step: str) -> list[bool | None]:
    return [e.fact_sent for e in read_evidence(evidence) if e.step == step and e.turn is not None]


@pytest.mark.parametrize("first, second", [(SdkLanguage.PYTHON, SdkLanguage.NODE), (SdkLanguage.NODE, SdkLanguage.PYTHON)],
                         ids=["python-to-node", "node-to-python"])
def test_a_session_one_sdk_made_the_other_resumes_with_the_fact(tmp_path, witness, event_schema, first, second):
    url, evidence = witness
    session_id = f"handoff-conformance-{first}-{second}"
    made = run_worker(first, spec(f"{first}-A", tmp_path, url, ("create", "tell", "close"), session_id), event_schema)
    resumed = run_worker(second, spec(f"{first}-B", tmp_path, url, ("resume", "ask", "metadata", "list", "close"),
                                      session_id), event_schema)
    for events, language in ((made, first), (resumed, second)):
        ready = of(events, Ready)[0]
        assert ready.sdk_language == language
        assert ready.sdk_version == (versions.pinned_node_sdk() if language == SdkLanguage.NODE else versions.DEFAULT_SDK)
        assert of(events, ActionFailed) == [] and events[-1].ok is True
    assert of(made, Turn)[0].answer == "OK"
    asked = of(resumed, Turn)[0]
    assert OTHER_FACT.is_in(asked.answer), asked.answer
    assert sent_the_fact(evidence, f"{first}-B") == [True]
    assert [e.action for e in of(resumed, ActionDone)] == ["resume", "metadata", "list", "close"]
    assert of(resumed, ActionDone)[2].listed == (session_id,)
    logged = of(resumed, EventLog)[0]
    assert logged.closed_before_resume is True and logged.resume_event_count == logged.events_before_resume
    # The worker's summary is what the Python side reads from the same log.
    on_disk = report(session_id, events_path(tmp_path, session_id).read_bytes())
    assert msgspec.structs.replace(logged, t=0) == msgspec.structs.replace(on_disk, t=0)


def test_the_node_worker_resumes_the_most_recent_and_finds_no_unknown_id(tmp_path, witness, event_schema):
    url, _ = witness
    registry = sqlite_url(tmp_path / "registry.db")  # beside the home, as a local step gets it
    made = run_worker(SdkLanguage.NODE, spec("recent-A", tmp_path, url, ("create-without-id", "tell", "close"),
                                             registry=registry, owner="carol"), event_schema)
    created = of(made, ActionDone)[0].session_id
    assert created and of(made, Ready)[0].store is None  # a registry file is not a store: the session is in the home
    database = connect(registry, read_only=True)
    try:
        [registered] = Registry.existing(database).sessions()
    finally:
        database.close()
    assert (registered.session_id, registered.owner, registered.created_sdk, registered.turns) == (
        created, "carol", versions.pinned_node_sdk(), 1)
    assert registered.created_on == of(made, Ready)[0].hostname
    resumed = run_worker(SdkLanguage.NODE, spec("recent-B", tmp_path, url, ("resume-most-recent", "ask", "close")),
                         event_schema)
    assert of(resumed, ActionDone)[0].session_id == created
    assert OTHER_FACT.is_in(of(resumed, Turn)[0].answer)
    unknown = run_worker(SdkLanguage.NODE, spec("unknown", tmp_path / "empty", url, ("resume", "ask"), "never-made"),
                         event_schema)
    failed = of(unknown, ActionFailed)
    assert [e.action for e in failed] == ["resume"] and "not found" in failed[0].message.lower()
    assert [(e.action, e.reason) for e in of(unknown, Skipped)] == [("ask", "no open session")]


def test_what_the_node_worker_cannot_do_is_an_error_event_not_a_crash(tmp_path, witness, event_schema):
    url, _ = witness
    events = run_worker(SdkLanguage.NODE, spec("cannot", tmp_path, url, ("create", "mint", "hold", "discover", "close"),
                                               "handoff-conformance-cannot"), event_schema)
    assert [e.action for e in of(events, ActionFailed)] == ["mint", "hold", "discover"]
    assert of(events, ActionFailed)[2].message == "discover needs a database store with a registry"
    bad = run_worker(SdkLanguage.NODE, spec("bad-store", tmp_path, url, ("create",), "x",
                                            store="mysql://user:secret@db/x"), event_schema)
    [failed] = of(bad, ActionFailed)
    assert failed.action == "worker" and failed.message.startswith("cannot open the session store: store ")
    assert "secret" not in failed.message and bad[-1].ok is False
    assert [e.action for e in of(events, ActionDone)] == ["create", "close"]
    assert events[-1].ok is False
    guarded = run_worker(SdkLanguage.NODE, spec("guarded", tmp_path, url, ("create",), "x", guarded=True,
                                                sdk_version="node@0.0.1"), event_schema)
    failed = of(guarded, ActionFailed)
    assert [e.action for e in failed] == ["start"]
    assert "asked for SDK node@0.0.1" in failed[0].message and "guarded" in failed[0].message
    assert [e.action for e in of(guarded, Skipped)] == ["create"]


def test_a_session_kept_in_the_database_store_passes_between_the_sdks_each_way_from_empty_homes(
        tmp_path, witness, event_schema):
    """Through the SDKs' SessionFs providers (the Node.js one's backed by the project's store
    code over the store bridge): the Node.js worker makes the session in a SQLite store, the
    Python worker finds it in the registry and resumes it, the Node.js worker finds it again
    and resumes it with both turns. No home holds the session's files, and the registry in
    the same database says which SDK made the session and which last wrote it."""
    url, evidence = witness
    store = sqlite_url(tmp_path / "store.db")
    homes = {step: tmp_path / f"home-{step}" for step in "ABC"}
    made = run_worker(SdkLanguage.NODE, spec("store-A", homes["A"], url, ("create-without-id", "tell", "close"),
                                             store=store), event_schema)
    session_id = of(made, ActionDone)[0].session_id
    found = run_worker(SdkLanguage.PYTHON, spec("store-B", homes["B"], url, ("discover", "resume", "ask", "close"),
                                                store=store), event_schema)
    again = run_worker(SdkLanguage.NODE, spec("store-C", homes["C"], url, ("discover", "resume", "ask", "close"),
                                              store=store), event_schema)
    for events in (made, found, again):
        assert of(events, Ready)[0].store == store and of(events, ActionFailed) == [] and events[-1].ok is True
    assert of(found, ActionDone)[0].registered == of(again, ActionDone)[0].registered == (session_id,)
    assert [home for home in homes.values() if (home / "session-state" / session_id).exists()] == []
    for events, step in ((found, "store-B"), (again, "store-C")):
        assert OTHER_FACT.is_in(of(events, Turn)[0].answer) and sent_the_fact(evidence, step) == [True]
    logged = of(again, EventLog)[0]
    assert logged.closed_before_resume is True and logged.resume_event_count == logged.events_before_resume
    assert logged.messages_before_resume == 2  # A's turn and B's, read back through the Node.js provider
    database = connect(store, read_only=True)
    try:
        [registered] = Registry.existing(database).sessions()
        stored = SessionFiles(database, session_id, "/nowhere").read_events()
    finally:
        database.close()
    node = versions.pinned_node_sdk()
    assert (registered.session_id, registered.created_sdk, registered.sdk_version) == (session_id, node, node)
    assert registered.turns == 3 and registered.last_resumed_on == of(again, Ready)[0].hostname
    # The worker's summary of the log is the stored log's, whichever SDK read it back.
    assert msgspec.structs.replace(logged, t=0) == msgspec.structs.replace(
        report(session_id, stored.encode("utf-8")), t=0)


@pytest.mark.parametrize(("scenario", "step", "where"), [("cross-sdk-container", "B", "ctr-b-1"),
                                                         ("cross-sdk-machine", "B", "host-b"),
                                                         ("cross-sdk-machine", "C", "host-c")],
                         ids=["container", "namespace", "ssh"])
def test_the_node_worker_ran_on_each_kind_of_host_and_spoke_the_protocol_there(matrix, event_schema, scenario, step,
                                                                               where):
    """From the default matrix's own run: the Node.js worker in a container (this machine's
    node and SDK mounted into the worker image), on a namespace host, and started by the
    remote shell of an SSH host; every line it wrote there is one the schema accepts."""
    ran = matrix.scenario(scenario)
    if ran.skipped:
        pytest.skip(ran.skipped)
    record = next(s for s in ran.steps if s.step == step)
    for line in record.lines:
        event_schema.validate(json.loads(line))
    view = record.view()
    assert (view.ready.sdk_language, view.ready.hostname) == (SdkLanguage.NODE, where)
    assert view.ready.sdk_version == versions.pinned_node_sdk()
    assert view.finished.ok is True
    [asked] = [t for t in matrix.asked(scenario) if t.step.step == step]
    assert OTHER_FACT.is_in(view.turns[0].answer) and asked.verdict == "kept"


def test_a_node_session_in_postgresql_is_discovered_and_resumed_by_the_python_sdk_and_again_by_node(matrix):
    """From the default matrix's run of cross-sdk-postgres: the Node.js worker's provider put
    the session in the database and its registry write let the Python worker on another host
    discover it, each host's home empty."""
    ran = matrix.scenario("cross-sdk-postgres")
    if ran.skipped:
        pytest.skip(ran.skipped)
    steps = matrix.steps("cross-sdk-postgres")
    assert [steps[name].ready.sdk_language for name in "ABC"] == [SdkLanguage.NODE, SdkLanguage.PYTHON,
                                                                  SdkLanguage.NODE]
    assert all((steps[name].ready.store or "").startswith("postgresql://") for name in "ABC")
    made = steps["A"].of(ActionDone)[0].session_id
    assert steps["B"].of(ActionDone)[0].registered == (made,)
    assert [(t.step.step, t.verdict) for t in matrix.asked("cross-sdk-postgres")] == [("B", "kept"), ("C", "kept")]
    assert steps["C"].eventlog.messages_before_resume == 2  # A's turn and B's, read back through the provider
