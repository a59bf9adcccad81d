"""Simulated hosts really are separate: they see only what the scenario shares, and
nothing of them (namespaces, links, sshd, workers) outlives a run."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from handoff import leftovers, scenario_files
from handoff.coordinator import placement
from handoff.fact import Fact
from handoff.hosts.base import PROJECT_ROOT
from handoff.hosts.capability import missing_capability
from handoff.hosts.namespace import NamespaceHost
from handoff.hosts.network import Lan
from handoff.hosts.zygote import Zygote
from handoff.processes import ProcessTracker
from tests.e2e.conftest import dead_runtime_markers, run_scenarios

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(missing_capability("ssh") is not None, reason=str(missing_capability("ssh"))),
]


def handoff_network_leftovers() -> list[str]:
    """Namespaces and links of this test process's runs, or of runs that are gone (runs
    of other checkouts, still going, are theirs)."""
    left = leftovers.find() + leftovers.find(of=os.getpid())
    return [leftover.name for leftover in left if leftover.kind in ("namespace", "link")]


def test_a_namespace_host_sees_only_its_own_home(tmp_path):
    home_a, home_b = tmp_path / "home-a", tmp_path / "home-b"
    home_a.mkdir()
    home_b.mkdir()
    (home_a / "secret-of-a").write_text("x")
    (home_b / "mine").write_text("y")
    lan = Lan()
    try:
        host = NamespaceHost("b", lan, [tmp_path])
        argv, env = host.enter(
            {"home": home_b}, "sh", "-c", f"hostname; ls /mnt/home; ls {home_a} 2>&1; echo $(ls /tmp); "
            "ip -4 -o addr show scope global | awk '{print $4}'",
        )
        seen = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30).stdout.splitlines()
        hostname, own_file, other_home, tmp_entries, address = seen
        assert hostname == "host-b"
        assert own_file == "mine"
        assert "No such file or directory" in other_home  # A's home is not even a path there
        # /tmp is the host's own: empty, but for the path to the installed project when a
        # clone lives under /tmp (the software stays visible, as on machines of one image)
        kept = {Path(p).parts[2] for p in (PROJECT_ROOT, sys.base_prefix) if Path(p).is_relative_to("/tmp")}
        assert set(tmp_entries.split()) == kept
        assert address == f"{host.address}/24" and host.address != lan.gateway
    finally:
        lan.close()
    assert handoff_network_leftovers() == []


async def _moved_in(outer: int) -> int:
    """The pid (as seen here) of the process that moved itself into the host, once it is
    settled there: the first process of a PID namespace of its own, in the host's user
    directory, with its view of the files built."""
    for _ in range(500):
        for child in psutil.Process(outer).children():
            try:
                status = Path(f"/proc/{child.pid}/status").read_text().splitlines()
                nspid = next(line for line in status if line.startswith("NSpid:")).split()[-1]
                mounted = Path(f"/proc/{child.pid}/mountinfo").read_text()
                settled = os.readlink(f"/proc/{child.pid}/cwd") == "/mnt/user"
            except OSError:  # it was still on its way, or is gone
                continue
            if nspid == "1" and settled and " /mnt/home " in mounted:
                return child.pid
        await asyncio.sleep(0.01)
    raise AssertionError("the forked worker never finished moving into its host")


# What a namespace host mounts inside its own mount table (handoff/hosts/namespace.py): its
# tmpfs root and hidden directories, binds onto /mnt, and fresh /tmp, /run, /proc and /sys.
HOST_MOUNT_SOURCES = ("handoff-host", "handoff-hidden")
HOST_MOUNT_POINTS = ("/mnt", "/tmp", "/run", "/proc", "/sys")


def _mount_points(run_dir: Path) -> set[str]:
    """The mounts here that a host's own could be, had they leaked: not every mount, since
    other tests running meanwhile mount and unmount in this mount table too (podman's
    overlays, network namespaces under /run/netns, a fault's small disk under /tmp)."""
    found = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        point, source = fields[4], fields[fields.index("-") + 2]
        if source in HOST_MOUNT_SOURCES or point in HOST_MOUNT_POINTS or point.startswith(("/mnt/", f"{run_dir}/")):
            found.add(point)
    return found


def test_a_worker_forked_into_a_host_is_its_first_process_and_sees_only_its_home(tmp_path):
    """The default path: forked from the zygote, the worker moves itself into the host
    (handoff/hosts/entering.py) and ends up where a spawned one would. Killed from outside
    or dying inside, its exit status comes back as the coordinator expects."""
    home_a, home_b = tmp_path / "home-a", tmp_path / "home-b"
    for home in (home_a, home_b):
        home.mkdir()
    (home_b / "mine").write_text("y")

    async def scenario_() -> dict:
        tracker, lan, seen = ProcessTracker(), Lan(), {}
        try:
            zygote = Zygote(tracker, tmp_path)
            await zygote.start()
            host = NamespaceHost("b", lan, [tmp_path], zygote)
            mounts_before = _mount_points(tmp_path)  # the host's network namespace is a mount here, rightly
            with (tmp_path / "worker.stderr").open("wb") as stderr:
                held = await host.start_worker(tracker, home_b, stderr, tmp_path)  # waits for its spec on stdin
                inner = await asyncio.wait_for(_moved_in(held.pid), 10)

                def same(kind: str, other: str) -> bool:
                    return os.stat(f"/proc/{inner}/ns/{kind}").st_ino == os.stat(other).st_ino

                seen["own_net"] = same("net", f"/var/run/netns/{host.namespace}")
                seen["shared_uts_or_mnt"] = same("uts", "/proc/self/ns/uts") or same("mnt", "/proc/self/ns/mnt")
                seen["hostname"] = subprocess.run(["nsenter", "-t", str(inner), "-u", "hostname"],
                                                  capture_output=True, text=True).stdout.strip()
                seen["home"] = os.listdir(f"/proc/{inner}/root/mnt/home")
                seen["other_home_visible"] = os.path.exists(f"/proc/{inner}/root{home_a}")
                seen["mounts_leaked_here"] = _mount_points(tmp_path) - mounts_before
                os.kill(held.pid, signal.SIGKILL)  # the pid the coordinator knows: the worker goes with it
                seen["exit"] = await held.wait()
                await asyncio.sleep(0.5)
                seen["inner_gone"] = not psutil.pid_exists(inner) or psutil.Process(inner).status() == "zombie"

                # The worker itself dies (say the OOM killer took it): its status is passed on.
                again = await host.start_worker(tracker, home_b, stderr, tmp_path)
                os.kill(await asyncio.wait_for(_moved_in(again.pid), 10), signal.SIGKILL)
                seen["exit_when_the_worker_dies"] = await again.wait()
        finally:
            await tracker.shutdown()
            tracker.stop_all()
            lan.close()
        return seen

    seen = asyncio.run(scenario_())
    assert seen["own_net"] and not seen["shared_uts_or_mnt"]
    assert seen["hostname"] == "host-b"
    assert seen["home"] == ["mine"] and not seen["other_home_visible"]
    assert seen["mounts_leaked_here"] == set()
    assert seen["exit"] == -signal.SIGKILL and seen["inner_gone"]
    assert seen["exit_when_the_worker_dies"] == -signal.SIGKILL
    assert handoff_network_leftovers() == []


def test_cross_machine_rows_ran_on_different_hosts(matrix):
    for name in ("cross-machine-shared-dir", "cross-machine-copied-state", "cross-machine-ssh"):
        a, b = (step.ready for step in matrix.steps(name).values())
        assert (a.hostname, b.hostname) == ("host-a", "host-b")
        assert a.address != b.address


def test_copied_state_is_discovered_on_the_other_host(matrix):
    b = matrix.steps("cross-machine-copied-state")["B"]
    found = {e.action: e for e in b.actions}
    assert found["metadata"].found is True
    assert found["list"].listed == (b.record.session_id,)


def test_nothing_of_the_hosts_is_left(matrix):
    assert handoff_network_leftovers() == []


def test_scenarios_needing_a_missing_capability_are_skipped_with_a_reason(monkeypatch):
    monkeypatch.setattr(placement, "missing_capability", lambda kind: f"no {kind} here")
    outcome = run_scenarios(scenario_files.select(["cross-machine-ssh"]))
    [turn] = outcome.turns()
    assert turn.verdict == "skipped" and "(namespace): no namespace here" in turn.reason
    assert outcome.judgement.exit_code() == 4  # nothing was judged: not a pass


CRASH_ON_A_HOST = """
title = "A crash on a simulated host"
proves = "-"
does_not_prove = "-"

[hosts]
a = "namespace"
b = "namespace"

[[steps]]
name = "A"
host = "a"
actions = ["create", "tell"]

[[steps.faults]]
kind = "kill"
at = "after-turn"

[[steps]]
name = "B"
host = "b"
actions = ["resume", "ask", "close"]
expect = "kept"
closed_before_resume = false
"""


@pytest.mark.serial  # in-use markers are checked across the machine: no other run may be killing runtimes meanwhile
def test_a_crash_on_a_simulated_host_keeps_the_context_and_leaves_no_in_use_markers(tmp_path):
    """A's worker and runtime die together inside host a; B on host b resumes. The killed
    runtime's markers, in host a's user directory and named by its pid inside that host,
    are removed all the same."""
    path = tmp_path / "crash-on-a-host.toml"
    path.write_text(CRASH_ON_A_HOST, encoding="utf-8")
    outcome = run_scenarios([scenario_files.load(path)], Fact("Can't Lose Them"))
    a, b = outcome.steps("crash-on-a-host").values()
    assert a.killed_on_purpose and a.record.exit_code == -signal.SIGKILL
    assert [(turn.verdict, turn.as_expected) for turn in outcome.asked("crash-on-a-host")] == [("kept", True)]
    assert dead_runtime_markers() == []


def test_a_simulated_ssh_host_s_runtime_unpacks_into_the_host_s_user_directory_not_this_machine_s_home(tmp_path):
    """sshd logs its sessions in with this machine's real home (root's /root, which the
    host's view shows): the worker must be given the host's own user directory, or its
    runtime unpacks itself and keeps its in-use markers in the real ~/.cache. A host of
    its own name, so its user directory starts empty and the unpacked runtime shows whose
    HOME the runtime had."""
    import shutil

    from handoff.hosts.base import USER_DIRS

    name = f"probe{os.getpid()}"
    path = tmp_path / "ssh-home.toml"
    path.write_text(f'title = "-"\nproves = "-"\ndoes_not_prove = "-"\n[hosts]\n{name} = "ssh"\n'
                    f'[[steps]]\nname = "A"\nhost = "{name}"\nactions = ["create", "tell", "close"]\n', encoding="utf-8")
    user_dir = USER_DIRS / f"host-{name}"
    try:
        outcome = run_scenarios([scenario_files.load(path)])
        [step] = outcome.steps("ssh-home").values()
        assert step.record.exit_code == 0, step.record.stderr_tail
        assert list(user_dir.glob(".cache/copilot/pkg/*/*/.extraction-complete"))
    finally:
        shutil.rmtree(user_dir, ignore_errors=True)
