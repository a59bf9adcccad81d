"""``python -m handoff.worker --spec FILE``: what a cluster's pod runs. The exported Job
mounts the step's spec, indented JSON, from its Secret; the worker must read all of it,
not stdin's first line, and say plainly when the file or the arguments are wrong."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from handoff import scenario_files
from handoff.export import k8s
from handoff.hosts import pod
from handoff.protocol import SPEC_OPTION, ActionFailed, Event, Finished
from handoff.words import WorkerStage

CLUSTER_SPEC = f"{pod.SPEC_DIR}/{pod.SPEC_FILE}"


def _worker(*arguments: str, stdin: bytes = b"") -> list[Event]:
    """The worker's events, as a coordinator would read them from its stdout."""
    done = subprocess.run([sys.executable, "-m", "handoff.worker", *arguments], input=stdin, capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return [msgspec.json.decode(line, type=Event) for line in done.stdout.splitlines()]


def _exported_spec() -> str:
    scenario = scenario_files.load(scenario_files.available()["cross-container-volume"])
    objects = k8s.manifests(scenario, "registry.example/copilot-handoff:1")
    return next(item["stringData"]["spec.json"] for item in objects if item["kind"] == "Secret"
                and "spec.json" in item["stringData"])


def test_the_exported_job_runs_the_worker_on_its_mounted_spec_without_a_shell():
    scenario = scenario_files.load(scenario_files.available()["cross-container-volume"])
    jobs = [item for item in k8s.manifests(scenario, "registry.example/copilot-handoff:1") if item["kind"] == "Job"]
    for job in jobs:
        (container,) = job["spec"]["template"]["spec"]["containers"]
        assert container["command"] == ["python", "-m", "handoff.worker", SPEC_OPTION, CLUSTER_SPEC]


def test_a_spec_of_many_lines_is_read_whole_from_the_file(tmp_path: Path):
    """The exported spec is indented: its first line alone is ``{``. A spec read whole gets
    as far as the runtime (not there at this path), never to 'cannot read the worker spec'."""
    text = _exported_spec()
    assert text.count("\n") > 10
    spec = tmp_path / "spec.json"
    spec.write_text(text.replace('"runtime_path": ""', '"runtime_path": "/nonexistent/copilot"'), encoding="utf-8")
    events = _worker(SPEC_OPTION, str(spec))
    assert not [e for e in events if isinstance(e, ActionFailed) and e.action == WorkerStage.READ_SPEC]
    assert isinstance(events[-1], Finished) and events[-1].ok is False  # it read the spec and tried


def test_stdin_still_gives_the_spec_its_first_line_only(tmp_path: Path):
    """Without arguments nothing changed: the coordinator's spec is one line, and the lines
    after it are its releases. The indented spec on stdin is refused at its first line."""
    (failed,) = _worker(stdin=_exported_spec().encode())
    assert isinstance(failed, ActionFailed) and failed.action == WorkerStage.READ_SPEC
    assert "from stdin" in failed.message


def test_a_missing_file_or_an_unknown_argument_is_one_event_naming_it(tmp_path: Path):
    (missing,) = _worker(SPEC_OPTION, str(tmp_path / "absent.json"))
    assert isinstance(missing, ActionFailed) and missing.action == WorkerStage.READ_SPEC
    assert "absent.json" in missing.message
    (unknown,) = _worker("--spek", "x")
    assert isinstance(unknown, ActionFailed) and "--spek" in unknown.message and SPEC_OPTION in unknown.message
