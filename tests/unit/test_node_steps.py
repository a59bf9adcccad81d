"""A step that names the Node.js SDK (``sdk = "node@1.0.14"``): what the scenario loader
accepts and refuses, where the worker is found, and how the host starts it."""

from __future__ import annotations

import json
import re

import pytest

from handoff import versions
from handoff.errors import UserError
from handoff.hosts.base import Launch
from handoff.scenario_files import load

HEADER = 'title = "T"\nproves = "P"\ndoes_not_prove = "D"\n'
STEP_A = '[[steps]]\nname = "A"\nactions = ["create", "tell", "close"]\n'


def scenario(tmp_path, node_step: str, top: str = ""):
    path = tmp_path / "demo.toml"
    path.write_text(top + HEADER + STEP_A + '[[steps]]\nname = "B"\nsdk = "node@1.0.14"\n' + node_step)
    return path


def refusal(tmp_path, node_step: str, top: str = "") -> str:
    path = scenario(tmp_path, node_step, top)
    with pytest.raises(UserError) as raised:
        load(path)
    assert str(path) in str(raised.value)
    return str(raised.value)


def test_a_node_step_loads_with_the_sdk_as_written(tmp_path):
    loaded = load(scenario(tmp_path, 'actions = ["resume", "ask", "close"]\nexpect = "kept"\n'))
    assert [step.sdk for step in loaded.steps] == [None, "node@1.0.14"]


@pytest.mark.parametrize("written", ["node@1.0", "node@", "nodejs@1.0.14", "node 1.0.14"])
def test_a_malformed_sdk_names_both_spellings(tmp_path, written):
    path = tmp_path / "demo.toml"
    path.write_text(HEADER + STEP_A.replace('name = "A"', f'name = "A"\nsdk = "{written}"'))
    with pytest.raises(UserError, match=r"field 'sdk' must be a version number such as \"1.0.24\", or "
                                        r"\"node@1.0.14\" for the Node.js SDK"):
        load(path)


@pytest.mark.parametrize("action", ["hold", "mint", "discover", "restart-runtime", "concurrent-resume-and-ask"])
def test_an_action_the_node_worker_cannot_do_is_refused_at_load(tmp_path, action):
    message = refusal(tmp_path, f'actions = ["resume", "{action}"]\n')
    assert f"field 'actions' has '{action}', which the Node.js worker" in message
    assert "create, create-without-id" in message  # what it does instead


def test_the_guard_and_a_database_store_are_refused_on_a_node_step(tmp_path):
    assert "field 'guarded' is set with sdk = 'node@1.0.14'" in refusal(
        tmp_path, 'actions = ["resume", "close"]\nguarded = true\n')
    assert "keeps sessions in its home only" in refusal(tmp_path, 'actions = ["resume", "close"]\n',
                                                         top='store = "sqlite"\n')
    for point in ("after-turn", "inside-write"):  # ("hold" needs the action hold, refused before)
        held = refusal(tmp_path, 'actions = ["resume", "ask"]\nexpect = "kept"\n'
                                 f'[[steps.faults]]\nkind = "kill"\nat = "{point}"\n')
        assert f"has a fault at '{point}'" in held and "holds are the Python worker's" in held


def test_the_node_worker_does_what_its_script_says_it_does():
    """The actions worker.mjs implements (Worker.prototype.actions) are NODE_WORKER_ACTIONS,
    which the loader lets through; each reason it gives for one it cannot do (NOT_HERE)
    names an action of the protocol."""
    from handoff.words import ACTIONS

    script = (versions.NODE_WORKER_DIR / "worker.mjs").read_text()

    def keys(opening: str, pattern: str) -> set[str]:
        start = script.index(opening)
        return set(re.findall(pattern, script[start:script.index("\n};", start)]))

    implemented = keys("Worker.prototype.actions = {", r'\n  async "?([a-z-]+)"?\(')
    not_here = keys("const NOT_HERE = {", r'\n  "?([a-z-]+)"?:')
    assert implemented == versions.NODE_WORKER_ACTIONS
    assert not_here and not_here <= set(ACTIONS) - implemented


@pytest.fixture
def node_project(tmp_path, monkeypatch):
    folder = tmp_path / "sdks" / "node"
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"dependencies": {"@github/copilot-sdk": "1.0.14"}}))
    monkeypatch.setattr(versions, "NODE_WORKER_DIR", folder)
    monkeypatch.setattr(versions.shutil, "which", lambda name: f"/usr/bin/{name}")
    return folder


def test_the_node_sdk_is_found_once_installed(node_project, monkeypatch):
    assert versions.pinned_node_sdk() == "node@1.0.14"
    with pytest.raises(versions.NotAvailable, match=r"SDK node@1.0.14 is not installed: run `make setup`"):
        versions.sdk("node@1.0.14")
    (node_project / "node_modules").mkdir()
    (node_project / "node_modules" / ".installed").write_text("")
    assert versions.sdk("node@1.0.14") == versions.SdkInstall("node@1.0.14", None, node_project / "worker.mjs")
    with pytest.raises(versions.NotAvailable, match=r"SDK node@1.0.13 is not pinned .* pins node@1.0.14"):
        versions.sdk("node@1.0.13")
    monkeypatch.setattr(versions.shutil, "which", lambda name: None)
    with pytest.raises(versions.NotAvailable, match=r"needs node on the PATH"):
        versions.sdk("node@1.0.14")


def test_a_node_worker_is_spawned_by_node_never_forked(tmp_path):
    launch = Launch(node_worker=tmp_path / "worker.mjs")
    assert launch.command() == ("node", str(tmp_path / "worker.mjs"))
    assert not launch.forkable and Launch().forkable
    assert launch.environment({"A": "1"}) == {"A": "1"}  # no PYTHONPATH: it is not a Python worker


def test_the_node_sdk_sorts_after_every_python_sdk():
    assert sorted(["node@1.0.14", "1.0.27", "1.0.24"], key=versions.sdk_key) == ["1.0.24", "1.0.27", "node@1.0.14"]


def test_the_skew_grid_takes_the_node_sdk_as_another_sdk(node_project, monkeypatch):
    from handoff.skew import grid
    from handoff.skew.expected import Pair

    with pytest.raises(UserError, match=r'--sdk node@1.0: not a version number such as "1.0.24", or "node@1.0.14"'):
        grid.chosen_versions([], ["node@1.0"])
    (node_project / "node_modules").mkdir()
    (node_project / "node_modules" / ".installed").write_text("")
    runtimes, sdks = grid.chosen_versions([versions.DEFAULT_RUNTIME], ["node@1.0.14", versions.DEFAULT_SDK])
    assert sdks == [versions.DEFAULT_SDK, "node@1.0.14"]
    cells = grid.plan(grid.pairs(runtimes, sdks))
    node = Pair(versions.DEFAULT_RUNTIME, "node@1.0.14")
    across = next(c for c in cells if grid.pairs_of(c) == (Pair(versions.DEFAULT_RUNTIME, versions.DEFAULT_SDK), node))
    assert across.name == f"{versions.DEFAULT_RUNTIME}+{versions.DEFAULT_SDK}-to-{versions.DEFAULT_RUNTIME}+node@1.0.14"
    assert [step.sdk for step in across.steps] == [versions.DEFAULT_SDK, "node@1.0.14"]
    assert across.steps[1].expect == "kept"


def test_an_expected_cells_rule_may_name_the_node_sdk(tmp_path):
    from handoff.skew.expected import Pair, expectation, load as load_rules

    path = tmp_path / "expected.toml"
    path.write_text('[[rules]]\nresumed_sdk = ["node@1.0.14"]\nexpect = "lost"\nbecause = "b"\n'
                    '[[rules]]\nexpect = "kept"\nbecause = "c"\n')
    rules = load_rules(path)
    assert expectation(rules, Pair("1.0.102", "1.0.25"), Pair("1.0.102", "node@1.0.14")).expect == "lost"
    assert expectation(rules, Pair("1.0.102", "node@1.0.14"), Pair("1.0.102", "1.0.25")).expect == "kept"


def test_a_node_step_may_run_on_a_namespace_host_and_is_skipped_where_it_cannot(tmp_path):
    from types import SimpleNamespace

    from handoff.coordinator.placement import why_not_runnable
    from handoff.protocol import Backend

    def on(kind: str) -> str:
        path = tmp_path / f"{kind}.toml"
        path.write_text(HEADER + f'[hosts]\nb = "{kind}"\n' + STEP_A
                        + '[[steps]]\nname = "B"\nhost = "b"\nsdk = "node@1.0.14"\nactions = ["resume", "ask"]\n'
                          'expect = "kept"\n')
        return load(path)

    services = SimpleNamespace(settings=SimpleNamespace(remote_hosts={}, backend=Backend(), store_url=None))
    assert on("namespace").steps[1].host == "b"
    for kind in ("ssh", "container"):
        reason = why_not_runnable(on(kind), services)
        assert reason == f"step 'B': the Node.js worker runs on host 'local' or a namespace host, not on 'b' ({kind})"
    path = tmp_path / "runtime.toml"
    path.write_text(HEADER + '[hosts]\nb = "namespace"\n' + STEP_A.replace('name = "A"', 'name = "A"\nhost = "b"\nruntime = "1.0.92"'))
    with pytest.raises(UserError, match=r"field 'runtime' is set on host 'b': other runtime and SDK versions run on host "
                                        r"'local' only \(the Node.js SDK also on a namespace host\)"):
        load(path)
