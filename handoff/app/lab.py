"""`handoff lab`: the lab's transcript (handoff/lab/), each run of it kept like any run:
stored, judged, and written as an HTML report when one was asked for."""

from __future__ import annotations

from pathlib import Path

from handoff import backends, inputs
from handoff.app.execute import Executed, Say, keep
from handoff.app.outputs import read_by_the_tool, write_html
from handoff.lab.calls import created_by
from handoff.lab.options import DEFAULT_HOME, LabOptions
from handoff.lab.other_sdk import run_lab_on
from handoff.lab.runner import run_lab
from handoff.runs import store as runs
from handoff.words import Command


def lab_options(backend: str, model: str | None, provider_url: str | None, api_key_env: str | None, fact: str,
                topic: str, home: Path | None, html_path: Path | None, runs_dir: Path, **choices) -> LabOptions:
    """The lab's options from the command's: the model backend chosen, the places of the
    HTML report and of the stored run, and the fact checked (``choices``: session_id,
    resume, resume_most_recent, third_turn, show_calls, which the lab checks itself)."""
    chosen = backends.choose(backend, model, provider_url, api_key_env)
    if html_path is not None:
        inputs.writable_file(html_path, "--html", keep=read_by_the_tool(runs_dir))
    inputs.writable_directory(runs_dir, "--runs-dir")
    return LabOptions(chosen, inputs.fact(fact, topic), home or DEFAULT_HOME, **choices)


def run_and_keep(options: LabOptions, runs_dir: Path, html_path: Path | None, say: Say,
                 note: Say, sdk: str | None = None) -> tuple[int, Executed | None]:
    """Run the lab (its exit code, see handoff/lab/runner.py) and keep its record, also
    when it fails part way; returns the code and the kept run (None: the runtime never
    started, so nothing was recorded). ``sdk``: another Python SDK's interpreter runs the
    lab's process (handoff/lab/other_sdk.py)."""
    kept: list[Executed] = []

    def keep_record(record) -> None:
        kept.append(keep(record, runs_dir))
        if html_path is not None:
            write_html(html_path, record, kept[-1].judgement, note)

    if sdk is not None:
        code = run_lab_on(sdk, options, say, note, runs_dir, keep_record)
    else:
        code = run_lab(options, say, note, keep=keep_record,
                       creator=lambda session_id: created_by(session_id, runs.records(runs_dir, command=Command.LAB)))
    return code, kept[-1] if kept else None
