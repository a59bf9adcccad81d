"""Nothing a run starts outlives it: not after SIGKILL (its processes die with it, and
`handoff clean` removes the rest), not after Ctrl-C pressed again and again."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from handoff import leftovers, owners
from handoff.containers.engine import Engine
from handoff.faults.machines import FILLER
from handoff.hosts.capability import missing_capability
from tests.owners_gone import Owner

# These kill runs with SIGKILL and look for what is left across the machine: `make test`
# runs them on their own, after the other end-to-end tests (pytest -m serial).
pytestmark = [pytest.mark.e2e, pytest.mark.serial]


def _start(*scenarios: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "handoff", "run", *scenarios],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _runtime_started(process: subprocess.Popen, timeout: float = 90) -> None:
    """Wait until one of the run's workers has its Copilot runtime up (mid-step)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in psutil.Process(process.pid).children(recursive=True):
            try:
                if "copilot" in " ".join(child.cmdline()):
                    return
            except psutil.Error:
                continue
        time.sleep(0.05)
    process.kill()
    pytest.fail(f"no runtime started within {timeout:.0f} s")


def _owned_by(owner: int) -> list[str]:
    found = []
    for process in psutil.process_iter(["pid", "status"]):
        try:
            if process.info["status"] != psutil.STATUS_ZOMBIE and process.environ().get("HANDOFF_OWNER") == str(owner):
                found.append(" ".join(process.cmdline())[:100])
        except psutil.Error:
            continue
    return found


@pytest.mark.skipif(missing_capability("ssh") is not None, reason=str(missing_capability("ssh")))
def test_after_sigkill_nothing_of_the_run_lives_and_clean_removes_the_rest():
    """A host scenario (namespaces, sshd) and a database one (a PostgreSQL server), killed
    mid-step with SIGKILL: within seconds no process of the run is alive; what is not a
    process (namespaces, links, the run directory, the server's data) is reported by
    `handoff doctor` and removed by `handoff clean`."""
    shared_before = _shared_memory()
    run = _start("cross-machine-postgres", "cross-machine-ssh")
    _runtime_started(run)
    run.kill()
    run.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _owned_by(run.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _owned_by(run.pid) == []
    left = [leftover for leftover in leftovers.find() if leftover.owner == run.pid]
    assert {leftover.kind for leftover in left} >= {"namespace", "link", "directory"}
    # The PostgreSQL server died with the run (its parent-death signal): its shared memory
    # carries no owner, and is a leftover because nothing uses it.
    assert _shared_memory() - shared_before
    doctor = subprocess.run([sys.executable, "-m", "handoff", "doctor"], capture_output=True, text=True, timeout=60)
    assert "killed runs left" in doctor.stdout and "fix: handoff clean" in doctor.stdout
    clean = subprocess.run([sys.executable, "-m", "handoff", "clean"], capture_output=True, text=True, timeout=60)
    assert clean.returncode == 0, clean.stderr
    assert [leftover for leftover in leftovers.find() if leftover.owner == run.pid] == []
    assert _shared_memory() == set()


def _shared_memory() -> set[str]:
    return {leftover.name for leftover in leftovers.find() if leftover.kind == "shared memory segment"}




def _container_runtime_started(run: subprocess.Popen, timeout: float = 180) -> None:
    """Wait until a Copilot runtime runs inside one of the run's containers (the image may
    be built first, once per machine)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and run.poll() is None:
        for process in psutil.process_iter(["cmdline"]):
            try:
                env = process.environ()
                if (env.get("HANDOFF_OWNER") == str(run.pid) and "HANDOFF_CONTAINER" in env
                        and "copilot" in " ".join(process.info["cmdline"] or [])):
                    return
            except psutil.Error:
                continue
        time.sleep(0.05)
    run.kill()
    pytest.fail(f"no runtime started in a container within {timeout:.0f} s: {run.communicate()[1][-500:]}")


def _running_containers(owner: int) -> list[str]:
    mark = f"handoff-{owners.tag(owner)}"
    out = subprocess.run(Engine().command("ps", "--format", "{{.Names}}"), capture_output=True, text=True,
                         env=Engine().env()).stdout
    return [name for name in out.split() if name.startswith(mark)]


def _pod_started(run: subprocess.Popen, timeout: float = 180) -> None:
    """Wait until a step's pod runs its worker (the image may be built first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and run.poll() is None:
        if any(name.endswith("-worker") for name in _running_containers(run.pid)):
            return
        time.sleep(0.05)
    run.kill()
    pytest.fail(f"no pod's worker ran within {timeout:.0f} s: {run.communicate()[1][-500:]}")


PODS = missing_capability("pod") or Engine().problem()
CONTAINERS = missing_capability("container") or Engine().problem()


@pytest.mark.skipif(CONTAINERS is not None, reason=str(CONTAINERS))
def test_after_sigkill_no_container_runs_and_clean_removes_its_volume_and_network():
    """A container scenario killed mid-step with SIGKILL: the run's containers stop by
    themselves (their lifeline), and what is left — the stopped container and its volume
    in the engine, the container hosts' network namespaces on the run's LAN — is removed
    by `handoff clean`."""
    run = _start("cross-container-volume")
    _container_runtime_started(run)
    assert _running_containers(run.pid)
    run.kill()
    run.wait(timeout=30)
    deadline = time.monotonic() + 15
    while (_running_containers(run.pid) or _owned_by(run.pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running_containers(run.pid) == [] and _owned_by(run.pid) == []
    left = [leftover for leftover in leftovers.find() if leftover.owner == run.pid]
    assert {leftover.kind for leftover in left} >= {"container", "volume", "namespace"}
    clean = subprocess.run([sys.executable, "-m", "handoff", "clean"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    assert [leftover for leftover in leftovers.find() if leftover.owner == run.pid] == []


@pytest.mark.parametrize("scenario, kind", [("cross-container-volume", "container"), ("cross-pod-claim", "pod")])
def test_ctrl_c_during_a_container_or_pod_step_removes_what_the_engine_holds(scenario, kind):
    problem = CONTAINERS if kind == "container" else PODS
    if problem is not None:
        pytest.skip(str(problem))
    run = _start(scenario)
    (_container_runtime_started if kind == "container" else _pod_started)(run)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr and "Exception in callback" not in stderr
    assert stderr.strip().endswith("error: interrupted; every worker, runtime and temporary file was removed")
    assert [leftover for leftover in leftovers.find() + leftovers.find(of=run.pid) if leftover.owner == run.pid] == []
    assert _running_containers(run.pid) == []


@pytest.mark.skipif(PODS is not None, reason=str(PODS))
def test_after_sigkill_clean_removes_the_pods_their_volumes_and_the_network():
    """A played pod scenario killed mid-step with SIGKILL: a pod is not ours to stop by a
    lifeline (it runs the exported objects), so what is left — the pod, its ConfigMap's
    and claim's volumes, the run's network — is `handoff clean`'s to remove."""
    run = _start("cross-pod-claim")
    _pod_started(run)
    run.kill()
    run.wait(timeout=30)
    left = [leftover for leftover in leftovers.find() if leftover.owner == run.pid]
    assert {leftover.kind for leftover in left} >= {"pod", "volume", "network"}
    clean = subprocess.run([sys.executable, "-m", "handoff", "clean"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    assert [leftover for leftover in leftovers.find() if leftover.owner == run.pid] == []
    assert _running_containers(run.pid) == []


@pytest.mark.parametrize("gap", [0.005, 0.02])
def test_ctrl_c_pressed_three_times_still_cleans_up_and_says_so_truly(gap):
    run = _start("crash-after-turn", "cross-process", "same-process")
    _runtime_started(run)
    for _ in range(3):
        run.send_signal(signal.SIGINT)
        time.sleep(gap)
    _, stderr = run.communicate(timeout=90)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr and "Event loop is closed" not in stderr
    assert stderr.strip().endswith("error: interrupted; every worker, runtime and temporary file was removed")
    assert _owned_by(run.pid) == []
    assert [leftover for leftover in leftovers.find() if leftover.owner == run.pid] == []


def test_a_run_removes_what_an_earlier_killed_run_left_and_leaves_nothing_of_its_own_database():
    """The next run cleans up after a killed one by itself, and says so. Its own database
    server it ends before it kills whatever else it started: a PostgreSQL killed with
    SIGKILL leaves its shared memory behind."""
    left = Path(tempfile.gettempdir()) / f"{owners.RUN_DIR_PREFIX}{secrets.token_hex(4)}-test"
    gone = Owner((owners.DIRECTORY, str(left)))
    left.mkdir()
    gone.end()
    shared_before = _shared_memory()
    done = subprocess.run([sys.executable, "-m", "handoff", "run", "cross-process-postgres"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "note: removed what a killed run left behind: 1 directory" in done.stderr
    assert not left.exists()
    assert _shared_memory() - shared_before == set()


def _small_disk_mounted(run: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until the run's disk-full fault has mounted its small file system (it is
    still copying the home onto it then)."""
    source = f"{owners.MOUNT_PREFIX}{owners.tag(run.pid)}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and run.poll() is None:
        if any(line.split()[0] == source for line in Path("/proc/mounts").read_text().splitlines()):
            return
        time.sleep(0.05)
    _missed(run, f"no {source} mount within {timeout:.0f} s")


def _missed(run: subprocess.Popen, what: str) -> None:
    """The moment to interrupt never came: say why, with what the run said."""
    run.kill()
    _, stderr = run.communicate()
    pytest.fail(f"{what} (the run {'ended' if run.returncode != -9 else 'was killed'}): {stderr[-1500:]}")


def _small_disk_full(run: subprocess.Popen, timeout: float = 120) -> None:
    """Wait until the disk-full fault is in: its filler is on the small disk (until the
    step ends and heals it, a few hundred milliseconds)."""
    filler = f"{owners.RUN_DIR_PREFIX}{owners.tag(run.pid)}-*/fault-disk-full/home-*/{FILLER}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and run.poll() is None:
        if any(Path(tempfile.gettempdir()).glob(filler)):
            return
        time.sleep(0.005)
    _missed(run, f"the disk-full fault's filler was not seen within {timeout:.0f} s")


@pytest.mark.parametrize("moment", [_small_disk_mounted, _small_disk_full], ids=["while-mounting", "disk-full"])
def test_ctrl_c_during_faults_heals_them_and_leaves_nothing(moment):
    """A full disk mounted and a database about to be stopped: Ctrl-C unmounts, stops
    every server and says so truly. Once the instant the small disk is mounted, while the
    home is still being copied onto it (a Ctrl-C there once left the mount and the run's
    directory behind), and once when the disk is full, the fault open."""
    run = _start("fault-disk-full", "fault-store-outage-before-resume")
    moment(run)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().endswith("error: interrupted; every worker, runtime and temporary file was removed")
    assert _owned_by(run.pid) == []
    assert [leftover for leftover in leftovers.find() + leftovers.find(of=run.pid) if leftover.owner == run.pid] == []


def test_after_sigkill_during_a_disk_full_fault_clean_unmounts_the_small_disk():
    run = _start("fault-disk-full")
    _small_disk_mounted(run)
    run.kill()
    run.wait()
    mine = [leftover for leftover in leftovers.find() if leftover.owner == run.pid]
    assert "mount" in {leftover.kind for leftover in mine}
    clean = subprocess.run([sys.executable, "-m", "handoff", "clean"], capture_output=True, text=True, timeout=120)
    assert clean.returncode == 0, clean.stderr
    assert [leftover for leftover in leftovers.find() if leftover.owner == run.pid] == []


def test_no_killed_runtime_left_an_in_use_marker():
    """After every run of the suite so far (the matrix's crash scenarios, the faults, the
    hosts: make test runs this module after them), no marker of a dead runtime is left
    in any host's user directory: whoever killed a runtime removed its markers."""
    from tests.e2e.conftest import dead_runtime_markers

    assert dead_runtime_markers() == []


def test_a_small_disk_its_run_still_uses_is_unmounted_after_those_processes_are_killed(tmp_path):
    """A process of the run with its working directory and a file open on the small disk
    (a runtime a kill has not ended yet) makes a plain unmount fail: it is killed, and the
    disk unmounted for real, not detached lazily with the process still writing to it."""
    point = tmp_path / "home"
    point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", f"{owners.MOUNT_PREFIX}{owners.tag()}", str(point)],
                   check=True)
    # Owned by this (live) process, so that no other checkout's run takes it for a leftover.
    holder = subprocess.Popen([sys.executable, "-c", "import time; f = open('held', 'w'); print('holding', flush=True); "
                               "time.sleep(600)"], cwd=point, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, owners.OWNER_VARIABLE: str(os.getpid())})
    try:
        assert holder.stdout.readline() == "holding\n"
        busy = subprocess.run(["umount", str(point)], capture_output=True, text=True)
        assert busy.returncode != 0 and "busy" in busy.stderr
        leftovers.unmount(str(point), os.getpid())
        assert holder.wait(timeout=10) == -signal.SIGKILL
        assert not os.path.ismount(point)
    finally:
        holder.kill()
        holder.wait()
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def _engine(*args: str) -> str:
    done = subprocess.run(Engine().command(*args), capture_output=True, text=True, env=Engine().env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(missing_capability("container") is not None or Engine().problem() is not None,
                    reason=str(missing_capability("container") or Engine().problem()))
def test_look_alikes_of_every_kind_outlive_clean_and_a_run():
    """Things named as the tool names its own, which no run of the tool made: a volume
    holding a backup, a running container, a container network, a network namespace, a
    veth pair and a small file system mounted under a disk's name, with the pid in the
    name either a gone one or one no pid can be. `handoff clean` and the cleanup at the
    start of `handoff run` leave every one alone, and `clean --dry-run` says why."""
    from handoff.containers import image

    gone = Owner()
    gone.end()
    tag = owners.tag(gone.pid)
    volume, container, network = "handoff-201912-backup", f"handoff-{tag}-web", f"handoff-{tag}ff-net"
    namespace, link, disk = f"handoff-{tag}-1-host", f"hv{tag}9", Path(tempfile.mkdtemp(prefix="handoff-look-alike-"))
    made: list[tuple[str, ...]] = []
    theirs = Path(tempfile.gettempdir()) / f"handoff-run-3ffff0-{secrets.token_hex(3)}-notmine"  # another user's
    mine = Path(tempfile.gettempdir()) / f"handoff-run-{tag}-{secrets.token_hex(3)}-mine"  # no ledger names it
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    mine.mkdir()
    try:
        _engine("volume", "create", volume)
        made.append(("volume", "rm", "-f", volume))
        _engine("run", "-d", "--name", container, "--network", "none", image.recipe().tag, "sleep", "600")
        made.append(("rm", "-f", "-t", "0", container))
        _engine("network", "create", network)
        made.append(("network", "rm", "-f", network))
        subprocess.run(["ip", "netns", "add", namespace], check=True)
        subprocess.run(["ip", "link", "add", link, "type", "veth", "peer", "name", f"hp{tag}9"], check=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "handoff-disk-3ffff0", str(disk)], check=True)
        (disk / "data").write_text("kept")

        def all_there() -> None:
            assert _engine("volume", "ls", "--format", "{{.Name}}").split().count(volume) == 1
            assert _engine("ps", "--format", "{{.Names}}").split().count(container) == 1  # still running
            assert _engine("network", "ls", "--format", "{{.Name}}").split().count(network) == 1
            assert namespace in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
            assert subprocess.run(["ip", "link", "show", link], capture_output=True).returncode == 0
            assert (disk / "data").read_text() == "kept"
            assert theirs.is_dir() and mine.is_dir()

        dry = subprocess.run([sys.executable, "-m", "handoff", "clean", "--dry-run"], capture_output=True, text=True,
                             timeout=120)
        assert dry.returncode == 0, dry.stderr
        for kind, name in [("volume", volume), ("container", container), ("network", network),
                           ("namespace", namespace), ("link", link), ("mount", str(disk))]:
            assert f"leaving alone {kind} {name}: no run of this tool" in dry.stdout
        clean = subprocess.run([sys.executable, "-m", "handoff", "clean"], capture_output=True, text=True, timeout=120)
        assert clean.returncode == 0, clean.stderr
        all_there()
        run = subprocess.run([sys.executable, "-m", "handoff", "run", "same-process"], capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        all_there()
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
        disk.rmdir()
        theirs.rmdir()
        mine.rmdir()
        subprocess.run(["ip", "link", "del", link], capture_output=True)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        for command in made:
            subprocess.run(Engine().command(*command), capture_output=True, env=Engine().env(), timeout=120)
