"""The store bridge (handoff/worker/store_bridge.py): what the Node.js worker's SessionFs
provider and registry writes reach, answered by the project's own store code."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

from handoff.stores.database import connect, sqlite_url
from handoff.stores.files import SessionFiles
from handoff.stores.registry import Registry
from handoff.worker.store_bridge import serve


def talk(*requests: dict) -> list[dict]:
    answers: list[dict] = []
    serve(iter(json.dumps(request) for request in requests), answers.append)
    return answers


def opening(store: str | None = None, registry: str | None = None, home: str = "/h") -> dict:
    return {"op": "open", "store": store, "registry": registry, "home": home}


def call(number: int, op: str, *args, session: str = "s1") -> dict:
    return {"id": number, "op": op, "session": session, "args": list(args)}


def test_a_database_store_answers_each_provider_call_as_the_python_provider_stores_it(tmp_path):
    store = sqlite_url(tmp_path / "store.db")
    events = "/state/events.jsonl"
    opened, *answers = talk(
        opening(store, home="/home/a"),
        call(1, "mkdir", "/state", True),
        call(2, "append_file", events, '{"type":"session.start"}\n'),
        call(3, "append_file", events, '{"type":"user.message"}\n'),
        call(4, "read_file", events),
        call(5, "stat", events),
        call(6, "readdir", "/state"),
        call(7, "exists", "/home/a/session-state/s1/workspace.yaml"),
        call(8, "read_file", "/state/missing.yaml"),
        call(9, "events_log"),
        call(10, "events_log", session="other"),
        call(11, "no-such-call"),
    )
    assert opened == {"ok": True, "value": {"store": store, "registry": True}}
    assert [a["id"] for a in answers] == list(range(1, 12))  # in order, one each
    assert answers[3]["value"] == '{"type":"session.start"}\n{"type":"user.message"}\n'
    assert answers[4]["value"]["is_dir"] is False and answers[4]["value"]["size"] == len(answers[3]["value"].encode())
    assert answers[5]["value"] == [["events.jsonl", False]]
    assert answers[6]["value"] is False
    assert answers[7] == {"id": 8, "ok": False, "code": "ENOENT",
                          "message": "[Errno 2] No such file or directory: '/state/missing.yaml'"}
    assert base64.b64decode(answers[8]["value"]) == answers[3]["value"].encode()
    assert answers[9]["value"] is None
    assert answers[10] == {"id": 11, "ok": False, "code": "UNKNOWN",
                           "message": "the store bridge has no call 'no-such-call'"}
    database = connect(store, read_only=True)
    try:  # the rows are the Python provider's, under its schema: another host's home finds them
        assert SessionFiles(database, "s1", "/home/b").read_events() == answers[3]["value"]
    finally:
        database.close()


def test_registry_writes_land_in_the_registry_and_discover_lists_a_database_stores_sessions(tmp_path):
    store = sqlite_url(tmp_path / "store.db")
    _, *answers = talk(
        opening(store),
        call(1, "created", "carol", "host-a", "1.0.102", "node@1.0.14"),
        call(2, "turned", "Remember this"),
        call(3, "resumed", "host-b", "1.0.102", "1.0.25"),
        call(4, "registered", session=""),
    )
    assert [a["value"] for a in answers] == [True, True, True, ["s1"]]
    database = connect(store, read_only=True)
    try:
        [registered] = Registry.existing(database).sessions()
    finally:
        database.close()
    assert (registered.owner, registered.created_on, registered.last_resumed_on) == ("carol", "host-a", "host-b")
    assert (registered.created_sdk, registered.sdk_version, registered.turns) == ("node@1.0.14", "1.0.25", 1)
    assert registered.summary == "Remember this"


def test_a_home_store_has_a_registry_only_when_given_one_and_no_session_files(tmp_path):
    registry = sqlite_url(tmp_path / "registry.db")
    opened, created, filed, discovered = talk(opening(None, registry, str(tmp_path)),
                                              call(1, "created", "alice", "h", "1.0.102", "node@1.0.14"),
                                              call(2, "read_file", "/state/events.jsonl"),
                                              call(3, "registered", session=""))
    assert opened["value"] == {"store": None, "registry": True} and created["value"] is True
    assert filed["ok"] is False and "no SessionFs store" in filed["message"]
    assert discovered["message"] == "discover needs a database store with a registry"
    bare, written = talk(opening(None, None, str(tmp_path)), call(1, "created", "alice", "h", "1.0.102"))
    assert bare["value"] == {"store": None, "registry": False}
    assert written == {"id": 1, "ok": True, "value": False}  # nothing to write to: not an error, and not a write


def test_a_store_that_cannot_be_opened_is_one_answer_without_its_password(tmp_path):
    [answer] = talk(opening("mysql://user:secret@db/x"))
    assert answer["ok"] is False and answer["message"].startswith("cannot open the session store: store ")
    assert "secret" not in answer["message"] and "***" in answer["message"]
    [wrong] = talk(call(1, "read_file", "/x"))
    assert wrong["ok"] is False and "the first request must open the store" in wrong["message"]


def test_the_bridge_runs_as_a_module_and_ends_with_its_input(tmp_path):
    requests = [opening(sqlite_url(tmp_path / "s.db")), call(1, "exists", "/state")]
    done = subprocess.run([sys.executable, "-m", "handoff.worker.store_bridge"], capture_output=True, text=True,
                          input="".join(json.dumps(r) + "\n" for r in requests), timeout=60)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["ok"] for line in done.stdout.splitlines()] == [True, True]
