"""`handoff conform`'s contract rows (handoff/conform/): a correct provider on plain files
keeps every one, a provider whose append overwrites fails that row and only that one, the
project's own SQLite store keeps them through the same path, and what cannot be judged
says so. The providers are the examples a reader learns from (examples/)."""

from __future__ import annotations

import asyncio
import os

import pytest
from typer.testing import CliRunner

from handoff.conform import suite
from handoff.cli import app
from handoff.conform.suite import Outcome, validate
from handoff.stores.database import connect
from handoff.stores.files import SessionFiles
from handoff.worker import sdk
from examples import files_provider, overwriting_provider


@pytest.fixture(autouse=True)
def provider_root(tmp_path, monkeypatch):
    monkeypatch.setenv("FILES_PROVIDER_ROOT", str(tmp_path / "files"))
    return tmp_path / "files"


def outcomes(report):
    return {row.name: row.outcome for row in report.rows}


def test_a_correct_provider_keeps_every_row_and_leaves_nothing_of_its_rows(provider_root):
    report = validate(files_provider.factory, runtime=False)
    assert set(outcomes(report).values()) == {Outcome.OK} and report.passed_required() and report.exit_code == 0
    assert not list(provider_root.rglob("*.txt")) and not list(provider_root.rglob("*.jsonl"))


def test_an_append_that_overwrites_fails_the_append_row_only():
    report = validate(overwriting_provider.factory, runtime=False)
    failed = {name for name, outcome in outcomes(report).items() if outcome != Outcome.OK}
    assert failed == {"append appends"} and report.exit_code == 1
    [row] = [row for row in report.rows if row.name == "append appends"]
    assert "holds 'third\\n', not the three lines in order" in row.reason


def test_the_project_s_sqlite_store_keeps_every_row_through_the_same_path(tmp_path):
    database = connect(f"sqlite:///{tmp_path / 'store.db'}")
    SessionFiles.create_schema(database)
    report = validate(lambda session: sdk.StoreProvider(SessionFiles(database, session.session_id, "/home/a")),
                      runtime=False)
    assert set(outcomes(report).values()) == {Outcome.OK}, [r for r in report.rows if r.outcome != Outcome.OK]


class MissingIsUnknown(files_provider.FilesProvider):
    async def read_file(self, path):
        if not self._path(path).exists():
            raise KeyError(path)  # a key-value store's miss: the runtime reads it as UNKNOWN, not ENOENT
        return await super().read_file(path)


class Hanging(files_provider.FilesProvider):
    async def stat(self, path):
        await asyncio.sleep(3600)


def test_a_miss_that_is_not_enoent_fails_naming_the_op_and_a_hang_is_unknown(provider_root, monkeypatch):
    missing = validate(lambda s: MissingIsUnknown(provider_root / s.session_id), runtime=False)
    [row] = [row for row in missing.rows if row.name == "missing is ENOENT"]
    assert row.outcome == Outcome.FAIL and "read_file gave UNKNOWN" in row.reason and "stat gave" not in row.reason
    monkeypatch.setattr(suite, "ROW_SECONDS", 0.2)
    hung = validate(lambda s: Hanging(provider_root / s.session_id), runtime=False)
    assert outcomes(hung)["stat"] == Outcome.UNKNOWN and hung.exit_code == 1
    assert "took more than" in next(r.reason for r in hung.rows if r.name == "stat")


def test_a_bad_factory_is_one_line_and_exit_2_before_any_row_runs(monkeypatch):
    """(Exits 0 and 1 run the runtime: tests/e2e/test_conform.py.)"""
    monkeypatch.chdir(os.path.dirname(os.path.dirname(files_provider.__file__)))
    runner = CliRunner()
    for spec, says in (("nope:factory", "no module 'nope'"), ("examples.files_provider:absent", "has no function"),
                       ("examples.files_provider:root", "not a factory of SessionFs providers"),
                       ("examples.files_provider", "name the factory as MODULE:FACTORY")):
        done = runner.invoke(app, ["conform", spec])
        assert done.exit_code == 2 and says in done.output and done.output.count("\n") == 1, (spec, done.output)


def test_a_persistence_row_judges_the_answer_and_the_witness_together():
    from handoff.conform.persistence import Heard
    from handoff.conform.suite import _judge
    from handoff.fact import Fact

    fact = Fact()
    said = f"Your favourite {fact.topic} is {fact.value}."
    assert _judge(Heard(said, True), fact, "held")[0] == Outcome.OK
    assert _judge(Heard("I don't know.", False), fact, "held")[0] == Outcome.FAIL
    assert _judge(Heard(said, False), fact, "held")[0] == Outcome.UNKNOWN  # named, but never sent: no evidence
    assert _judge(Heard(None, None, "Session not found"), fact, "held") == (Outcome.FAIL, "Session not found")
    assert _judge(Heard(None, None, "no MODULE:FACTORY", unsure=True), fact, "held")[0] == Outcome.UNKNOWN


def test_the_discovery_row_holds_only_when_a_runtime_with_another_home_lists_it_and_reads_its_metadata():
    from handoff.conform.persistence import Found
    from handoff.conform.suite import PERSISTENCE, _judge
    from handoff.fact import Fact

    fact = Fact()
    assert _judge(Found(True, True), fact, "held") == (Outcome.OK, "held")
    for found, missed in ((Found(False, True), "list_sessions does not list it:"),
                          (Found(True, False), "get_session_metadata returns None:"),
                          (Found(False, False), "list_sessions does not list it and get_session_metadata returns")):
        outcome, reason = _judge(found, fact, "held")
        assert outcome == Outcome.FAIL and reason.startswith(missed) and "registry of its own" in reason, found
    assert _judge(Found(False, False, "listing failed: boom"), fact, "held") == (Outcome.FAIL, "listing failed: boom")
    assert [row.required for row in PERSISTENCE if row.name.startswith("discovery")] == [False]  # the runtime's, not the provider's


def test_without_its_module_and_factory_the_new_process_row_is_unknown():
    from handoff.conform.persistence import new_process
    from handoff.fact import Fact

    heard = new_process(files_provider.factory, None, Fact())
    assert heard.unsure and "none was given" in heard.problem


def test_two_resumers_hold_only_when_the_log_stays_one_line_whoever_kept_the_second_out():
    from handoff.conform.persistence import Shared
    from handoff.conform.suite import PERSISTENCE, _judge
    from handoff.fact import Fact

    fact = Fact()
    assert _judge(Shared(2, 20, 0, False), fact, "held") == (Outcome.OK, "held (20 events)")
    outcome, reason = _judge(Shared(1, 14, 0, False, kept_out="RuntimeError: locked"), fact, "held")
    assert outcome == Outcome.OK and "the second writer was kept out (RuntimeError: locked)" in reason
    outcome, reason = _judge(Shared(2, 20, 1, True), fact, "held")
    assert outcome == Outcome.FAIL and "the log forks at 1 point(s), and the second resume's event says alreadyInUse" \
        in reason
    assert _judge(Shared(1, 14, 1, False, kept_out="late"), fact, "held")[0] == Outcome.FAIL  # refused, yet forked
    assert _judge(Shared(0, 0, 0, False, problem="boom"), fact, "held") == (Outcome.UNKNOWN, "boom")
    assert [row.required for row in PERSISTENCE if row.name == "two resumers at once"] == [False]


def test_a_team_s_test_asserts_the_contract_in_one_call_and_is_told_each_row_that_fails():
    from handoff.conform.testing import assert_conforms

    assert assert_conforms(files_provider.factory, runtime=False).passed_required()
    with pytest.raises(AssertionError, match=r"does not keep the contract: append appends: fail \(") as failed:
        assert_conforms(overwriting_provider.factory, runtime=False)
    assert str(failed.value).count(": fail (") == 1  # that row alone

