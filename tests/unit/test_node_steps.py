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


@pytest.mark.parametrize("action", ["hold", "mint", "restart-runtime", "concurrent-resume-and-ask"])
def test_an_action_the_node_worker_cannot_do_is_refused_at_load(tmp_path, action):
    message = refusal(tmp_path, f'actions = ["resume", "{action}"]\n')
    assert f"field 'actions' has '{action}', which the Node.js worker" in message
    assert "create, create-without-id" in message  # what it does instead


def test_the_guard_is_refused_on_a_node_step_and_a_database_store_is_not(tmp_path):
    assert "field 'guarded' is set with sdk = 'node@1.0.14'" in refusal(
        tmp_path, 'actions = ["resume", "close"]\nguarded = true\n')
    for store in ("sqlite", "postgres"):  # through the SDK's SessionFs provider and the store bridge
        loaded = load(scenario(tmp_path, 'actions = ["discover", "resume", "close"]\n', top=f'store = "{store}"\n'))
        assert (loaded.store, loaded.steps[1].sdk) == (store, "node@1.0.14")
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


def test_a_node_step_runs_on_every_kind_of_host_and_in_a_container_only_with_a_node_the_image_can_run(
        tmp_path, monkeypatch):
    from types import SimpleNamespace

    from handoff.coordinator import placement
    from handoff.protocol import Backend

    def on(kind: str) -> str:
        path = tmp_path / f"{kind}.toml"
        path.write_text(HEADER + f'[hosts]\nb = "{kind}"\n' + STEP_A
                        + '[[steps]]\nname = "B"\nhost = "b"\nsdk = "node@1.0.14"\nactions = ["resume", "ask"]\n'
                          'expect = "kept"\n')
        return load(path)

    monkeypatch.setattr(placement.versions, "sdk", lambda name: versions.SdkInstall(name, None, tmp_path / "w.mjs"))
    monkeypatch.setattr(placement, "missing_capability", lambda kind: None)
    containers = SimpleNamespace(problem=None)
    services = SimpleNamespace(settings=SimpleNamespace(remote_hosts={}, backend=Backend(), store_url=None),
                               lan=object(), lan_problem=None, containers=containers)
    monkeypatch.setattr(placement, "node_problem", lambda: None)
    for kind in ("namespace", "ssh", "container"):
        assert on(kind).steps[1].host == "b" and placement.why_not_runnable(on(kind), services) is None
    monkeypatch.setattr(placement, "node_problem", lambda: "/usr/bin/node needs libnode.so.109")
    assert placement.why_not_runnable(on("container"), services) == (
        "step 'B': the Node.js worker in a container: /usr/bin/node needs libnode.so.109")
    assert placement.why_not_runnable(on("namespace"), services) is None  # the image's libraries are no matter there
    path = tmp_path / "runtime.toml"
    path.write_text(HEADER + '[hosts]\nb = "namespace"\n' + STEP_A.replace('name = "A"', 'name = "A"\nhost = "b"\nruntime = "1.0.92"'))
    with pytest.raises(UserError, match=r"field 'runtime' is set on host 'b': other runtime and SDK versions run on host "
                                        r"'local' only \(the Node.js SDK on any host\)"):
        load(path)


def test_a_restarted_container_runs_the_sdk_it_ran_before(tmp_path):
    """A restart starts the same container, whose command is its first step's worker: a
    restart step that names another SDK would be run by the one before, so it is refused."""
    top = '[hosts]\nc = "container"\n'
    first = '[[steps]]\nname = "A"\nhost = "c"\nhome = "anonymous"\nactions = ["create", "tell"]\n'

    def restart(first_sdk: str, again_sdk: str) -> str:
        path = tmp_path / "restart.toml"
        path.write_text(HEADER + top + first.replace('name = "A"', f'name = "A"\n{first_sdk}')
                        + f'[[steps]]\nname = "B"\nhost = "c"\nrestart = true\n{again_sdk}'
                          'actions = ["resume", "ask"]\nexpect = "kept"\n')
        return path

    node = 'sdk = "node@1.0.14"\n'
    assert [step.sdk for step in load(restart(node, node)).steps] == ["node@1.0.14", "node@1.0.14"]
    with pytest.raises(UserError, match=r"field 'sdk' differs from step 'A''s, whose container this step restarts: "
                                        r"a restarted container runs the worker it ran before \(sdk = the default\)"):
        load(restart("", node))
    with pytest.raises(UserError, match=r"field 'restart' differs from step 'A''s, .* \(sdk = node@1.0.14\)"):
        load(restart(node, ""))


def test_a_node_step_over_ssh_runs_the_node_worker_of_the_project_there_or_says_what_is_missing(tmp_path):
    import subprocess

    from handoff.hosts.base import PROJECT_ROOT
    from handoff.hosts.ssh import SshHost, SshTarget

    host = SshHost("b", SshTarget("root", "10.0.0.2", 22, "/h", str(tmp_path)), "127.0.0.1", 80)
    assert host.worker_command() == f"cd {tmp_path} && exec .venv/bin/python -m handoff.worker"
    node = host.worker_command(Launch(node_worker=PROJECT_ROOT / "sdks" / "node" / "worker.mjs"))
    assert node.endswith("exec node sdks/node/worker.mjs")  # the project's worker on that machine, by its place there

    def remote(path: str) -> subprocess.CompletedProcess:  # the remote shell, run here
        return subprocess.run(["/bin/sh", "-c", node], capture_output=True, text=True, env={"PATH": path}, timeout=30)

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    no_node = remote(str(bin_dir))
    assert no_node.returncode == 127
    assert no_node.stderr.strip() == (f"root@10.0.0.2:{tmp_path}: no node on the PATH for the Node.js worker: "
                                      f"install Node.js 20+ there")
    (bin_dir / "node").write_text("#!/bin/sh\necho ran \"$@\"\n")
    (bin_dir / "node").chmod(0o755)
    not_set_up = remote(f"{bin_dir}:/usr/bin:/bin")
    assert not_set_up.returncode == 127 and "the Node.js worker is not installed there: run make setup there" in (
        not_set_up.stderr)
    (tmp_path / "sdks" / "node" / "node_modules").mkdir(parents=True)
    (tmp_path / "sdks" / "node" / "node_modules" / ".installed").write_text("")
    ready = remote(f"{bin_dir}:/usr/bin:/bin")
    assert (ready.returncode, ready.stdout) == (0, "ran sdks/node/worker.mjs\n")


def test_a_node_step_in_a_container_runs_the_mounted_node_and_worker(tmp_path, monkeypatch):
    from handoff.hosts import container

    node = tmp_path / "node"
    monkeypatch.setattr(container, "node_executable", lambda: node)
    worker = tmp_path / "sdks" / "node" / "worker.mjs"
    launch = Launch(node_worker=worker)
    assert container.worker_command(launch) == (str(node), str(worker))
    assert container.worker_command(Launch()) == ("python3.11", "-m", "handoff.worker")
    runtime = tmp_path / "runtime" / "copilot"
    python_mounts = container.software_mounts(runtime)
    assert container.software_mounts(runtime, launch) == [*python_mounts, (node, node), (worker.parent, worker.parent)]


@pytest.mark.parametrize(("ldd", "problem"), [
    ("\tlinux-vdso.so.1 (0x1)\n\tlibdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x2)\n"
     "\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x3)\n\tlibm.so.6 => /lib/libm.so.6 (0x4)\n"
     "\tlibgcc_s.so.1 => /lib/libgcc_s.so.1 (0x5)\n\tlibpthread.so.0 => /lib/libpthread.so.0 (0x6)\n"
     "\tlibc.so.6 => /lib/libc.so.6 (0x7)\n\t/lib64/ld-linux-x86-64.so.2 (0x8)\n", None),
    ("\tlinux-vdso.so.1 (0x1)\n\tlibnode.so.109 => /lib/libnode.so.109 (0x2)\n\tlibuv.so.1 => /lib/libuv.so.1 (0x3)\n"
     "\tlibc.so.6 => /lib/libc.so.6 (0x7)\n",
     "/x/node needs libnode.so.109, libuv.so.1, which the worker image does not have"),
])
def test_a_node_that_links_libraries_the_image_lacks_is_named(monkeypatch, ldd, problem):
    import subprocess
    from pathlib import Path

    from handoff.hosts import container

    monkeypatch.setattr(container, "node_executable", lambda: Path("/x/node"))
    monkeypatch.setattr(container.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, ldd, ""))
    found = container.node_problem()
    assert found == problem if problem is None else found.startswith(problem)
    monkeypatch.setattr(container, "node_executable", lambda: None)
    assert container.node_problem() == "the Node.js worker needs node on the PATH: install Node.js 20+"


def test_doctor_says_whether_this_machines_node_runs_in_the_worker_image(monkeypatch):
    from handoff import doctor
    from handoff.containers import engine, image
    from handoff.hosts import container

    class Podman:
        def __init__(self, name: str = "podman"):
            self.name = name

        def problem(self):
            return None if self.name == "podman" else "no daemon"

        def version(self):
            return "4.3.1"

    monkeypatch.setattr(engine, "Engine", Podman)
    monkeypatch.setattr(doctor, "missing_capability", lambda kind: None)
    monkeypatch.setattr(image, "present", lambda engine, recipe: True)
    monkeypatch.setattr(image, "python_problem", lambda recipe: None)
    monkeypatch.setattr(doctor.shutil, "which", lambda name: f"/usr/bin/{name}")

    def node_line():
        return next(line for line in doctor._containers() if line.label == "node in containers")

    monkeypatch.setattr(container, "node_problem", lambda: None)
    assert node_line().status == doctor.OK
    monkeypatch.setattr(container, "node_problem", lambda: "/usr/bin/node needs libnode.so.109, which ...")
    missing = node_line()
    assert missing.status == doctor.MISSING and missing.detail.startswith("/usr/bin/node needs libnode.so.109")
    assert "self-contained Node.js 20+" in missing.fix
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    assert [line for line in doctor._containers() if line.label == "node in containers"] == []
