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



def play(factory, turn):
    from handoff.conform.cost import _played

    return asyncio.run(_played(factory, turn))


def a_turn():
    from handoff.conform.cost import Call

    event = '{"type":"user.message","data":{"content":"ü ✓ 𝄞"}}\n'  # multi-byte, as a turn's events are
    return [Call("append_file", "/state/events.jsonl", content=event),
            Call("write_file", "/state/workspace.yaml.tmp.1", content="turns: n\n"),
            Call("rename", src="/state/workspace.yaml.tmp.1", dest="/state/workspace.yaml"),
            Call("read_file", "/state/workspace.yaml")]


def test_a_turn_played_to_200_reads_back_as_written_through_a_correct_provider_and_leaves_nothing(provider_root):
    from handoff.conform.cost import TURNS

    grown, problem = play(files_provider.factory, a_turn())
    event = len(a_turn()[0].content.encode())
    assert problem is None and [g.turns for g in grown] == list(TURNS)
    assert [g.stored for g in grown] == [turns * event + len(b"turns: n\n") for turns in TURNS]
    assert not [path for path in provider_root.rglob("*") if path.is_file()]


class Capped(files_provider.FilesProvider):
    """A store with a limit per item (as a key-value store's is): a log past it cannot grow."""

    async def append_file(self, path, content, mode=None):
        if self._path(path).exists() and self._path(path).stat().st_size + len(content.encode()) > 4_000:
            raise OSError("item too large")
        await super().append_file(path, content, mode)


class Lying(files_provider.FilesProvider):
    async def stat(self, path):
        info = await super().stat(path)
        info.size = len((await self.read_file(path)))  # characters, not bytes
        return info


def test_a_long_session_that_the_provider_cannot_hold_or_sizes_wrongly_fails_saying_when(provider_root):
    event = a_turn()[0].content
    _, problem = play(lambda session: Capped(provider_root / session.session_id), a_turn())
    assert problem == f"turn {4_000 // len(event.encode()) + 1}: append_file(/state/events.jsonl) failed: item too large"
    _, problem = play(lambda session: Lying(provider_root / session.session_id), a_turn())
    assert problem == (f"after 10 turns, stat of /state/events.jsonl says {10 * len(event)} bytes, "
                       f"not {10 * len(event.encode())} bytes")
    _, problem = play(overwriting_provider.factory, a_turn())
    assert problem == (f"after 10 turns, /state/events.jsonl reads back {len(event.encode())} bytes that are not "
                       f"the {10 * len(event.encode())} written")


def test_the_cost_row_holds_on_what_was_read_back_and_says_the_figures():
    from handoff.conform.cost import Cost, Grown
    from handoff.conform.suite import _judge
    from handoff.fact import Fact

    measured = Cost(1, 2710, (Grown(10, 0.02, 0.02, 0.1, 27100), Grown(200, 0.05, 0.05, 0.4, 542000)))
    outcome, reason = _judge(measured, Fact(), "held")
    assert outcome == Outcome.OK and "at 200 0.05 ms (2.5x)" in reason and "2,710 bytes per turn" in reason
    assert _judge(Cost(1, 2710, problem="after 10 turns, x"), Fact(), "held") == (Outcome.FAIL, "after 10 turns, x")
    assert _judge(Cost(0, 0, problem="hung", unsure=True), Fact(), "held") == (Outcome.UNKNOWN, "hung")


def test_the_fence_lets_only_the_writer_the_lease_names_change_the_session_s_files(tmp_path):
    from handoff.guard.fence import Fence, Superseded
    from handoff.stores.registry import Registry

    registry = Registry(connect(f"sqlite:///{tmp_path / 'registry.db'}"))
    first, second = Fence(registry, "s", "first"), Fence(registry, "s", "second")
    with pytest.raises(Superseded) as refused:
        first.check("append_file(/x)")  # no lease at all
    assert str(refused.value) == "this writer no longer holds the session's lease: append_file(/x) refused, nothing written"
    assert registry.take_lease("s", "first", 3.0, now=0.0)
    first.check("append_file(/x)")
    with pytest.raises(Superseded):
        second.check("append_file(/x)")
    first.check("append_file(/x)")  # run out (the clock is past 3.0) but taken by nobody: nobody else wrote
    assert registry.take_lease("s", "second", 3.0, now=10.0)
    second.check("append_file(/x)")
    with pytest.raises(Superseded):
        first.check("append_file(/x)")


def test_a_fenced_provider_passes_reads_and_refuses_every_change_before_it_reaches_the_store(provider_root):
    from handoff.guard.fence import Superseded

    class Refusing:
        def __init__(self):
            self.refused = []

        def check(self, change):
            self.refused.append(change)
            raise Superseded(change)

    store = files_provider.factory(suite.StandInSession("s"))
    asyncio.run(store.write_file("/state/a", "kept"))
    fence = Refusing()
    fenced = sdk.Fenced(store, fence)
    assert asyncio.run(fenced.read_file("/state/a")) == "kept" and asyncio.run(fenced.exists("/state/a"))
    for change in (fenced.write_file("/state/a", "lost"), fenced.append_file("/state/a", "lost"),
                   fenced.mkdir("/state/d", True), fenced.rm("/state/a", False, False),
                   fenced.rename("/state/a", "/state/b")):
        with pytest.raises(Superseded):
            asyncio.run(change)
    assert asyncio.run(store.read_file("/state/a")) == "kept" and not asyncio.run(store.exists("/state/d"))
    assert fence.refused == ["write_file(/state/a)", "append_file(/state/a)", "mkdir(/state/d)", "rm(/state/a)",
                             "rename(/state/a)"]  # what was refused, named for the message


def test_the_lease_row_holds_when_the_superseded_writer_left_the_log_as_the_new_holder_closed_it():
    from handoff.conform.lease import Superseded
    from handoff.conform.suite import _judge
    from handoff.fact import Fact

    outcome, reason = _judge(Superseded(True, False, "Exception: Session error: refused"), Fact(), "held")
    assert outcome == Outcome.OK and reason == "held; the superseded writer was told: Exception: Session error: refused"
    outcome, reason = _judge(Superseded(True, True, "an answer"), Fact(), "held")
    assert outcome == Outcome.FAIL and "(it was told: an answer): its write became durable" in reason
    assert _judge(Superseded(False, False, "x"), Fact(), "held")[0] == Outcome.FAIL
    assert _judge(Superseded(False, False, "", "no lease", unsure=True), Fact(), "held") == (Outcome.UNKNOWN,
                                                                                            "no lease")
