"""A simulated machine made of Linux namespaces, with no container engine.

Each namespace host has
* its own network namespace on the run's bridge, with its own address (network);
* its own hostname, ``host-<name>`` (UTS);
* its own mount table: a private ``/mnt`` holding its home (``/mnt/home``, the only
  store it is given) and its user directory (``/mnt/user``, kept per host name under
  ``.state/hosts/``), and empty tmpfs mounts over ``/tmp``, ``/run`` and the run's
  directory, so no other host's home is visible (mount);
* its own process tree, the worker being its first process (PID).
A worker gets there in one of two ways: forked from the run's zygote, it moves itself in
(entering.py); spawned (``--spawn-workers``, and sshd), it is started through ``ip netns
exec`` and ``unshare``. Both run the same script to build the host's view of the files.
It shares the machine's installed software (the venv and the runtime executable), as
machines built from one image do.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from handoff.hosts.base import PIPES, PROJECT_ROOT, USER_DIRS, WORKER_MODULE, Host, Launch, compile_cache, worker_env
from handoff.hosts.network import Lan
from handoff.hosts.zygote import Zygote
from handoff.processes import ProcessTracker
from handoff.words import HostKind

INSIDE = "/mnt"
HOME_INSIDE = f"{INSIDE}/home"
USER_INSIDE = f"{INSIDE}/user"
# The runtime keeps Node's compile cache under $TMPDIR, which is empty on every start of
# a host; in the host's user directory it persists, as it would on a real machine
# (a warm start is ~0.2 s of CPU cheaper).
COMPILE_CACHE = compile_cache(USER_INSIDE)

# Builds the host's private view of the files, inside new UTS and mount namespaces.
# HANDOFF_BINDS is "name=/source ..." (directories of this machine shown at /mnt/<name>),
# HANDOFF_HIDE the directories covered by empty tmpfs mounts, deepest first, and
# HANDOFF_KEEP the installed software that must stay visible at its own path even when
# it lives under a hidden directory (a project cloned into /tmp, say).
_BUILD_VIEW = f"""
set -e
hostname "$HANDOFF_HOSTNAME"
mount -t tmpfs handoff-host {INSIDE}
for bind in $HANDOFF_BINDS; do
  mkdir "{INSIDE}/${{bind%%=*}}"
  mount --bind "${{bind#*=}}" "{INSIDE}/${{bind%%=*}}"
done
mkdir {INSIDE}/.keep
n=0; for kept in $HANDOFF_KEEP; do n=$((n+1)); mkdir {INSIDE}/.keep/$n; mount --bind "$kept" {INSIDE}/.keep/$n; done
for hidden in $HANDOFF_HIDE; do [ -d "$hidden" ] && mount -t tmpfs handoff-hidden "$hidden"; done
n=0; for kept in $HANDOFF_KEEP; do
  n=$((n+1)); [ -d "$kept" ] || mkdir -p "$kept"; mount --bind {INSIDE}/.keep/$n "$kept"
done
umount -l {INSIDE}/.keep/* 2>/dev/null || true
mkdir -p /run/sshd
"""
# The spawned path: ``ip netns exec`` and ``unshare --mount-proc`` did the namespaces, /proc
# and /sys; the script then becomes the command as the namespace's first process.
_ENTER = _BUILD_VIEW + f"""
cd {USER_INSIDE}
exec "$@"
"""
# The forked path (entering.py): the process made its namespaces itself, so it also makes
# its mounts private and mounts the /proc of its PID namespace and the /sys of its network
# namespace, as those two tools do. Private first: nothing mounted after it can reach the
# machine's own mount table.
_FORKED_VIEW = """
set -e
mount --make-rprivate /
mount -t proc proc /proc
umount -l /sys
mount -t sysfs sysfs /sys
""" + _BUILD_VIEW


HIDDEN = ("/tmp", "/run")  # empty in every simulated host (besides the run's own directory)


def unseen(path: Path) -> str | None:
    """The directory that hides ``path`` from a simulated host (None: the host sees it).
    /tmp and /run are empty there; the project and Python's prefix stay in view wherever
    they are. The path is taken as given, a link not followed: the host looks it up so."""
    given = Path(os.path.abspath(path))
    if any(given.is_relative_to(kept) for kept in (PROJECT_ROOT, Path(sys.base_prefix))):
        return None
    return next((hidden for hidden in HIDDEN if given.is_relative_to(hidden)), None)


class NamespaceHost(Host):
    kind = HostKind.NAMESPACE
    on_simulated_lan = True
    reaches_internet = False

    def __init__(self, name: str, lan: Lan, hidden: list[Path], zygote: Zygote | None = None):
        super().__init__(name)
        self.zygote = zygote  # None: workers are spawned through `ip netns exec` + `unshare`
        self.lan = lan
        self.hidden = hidden
        self.hostname = f"host-{name}"
        # The host's user directory outlives the run, as a machine's would: the runtime
        # unpacks itself into ~/.cache once per machine, not on every start (~1 s).
        self.user_dir = USER_DIRS / self.hostname
        self.user_dir.mkdir(parents=True, exist_ok=True)
        self.namespace, self.address = lan.add_host(name)
        self.netns, self.lan_gateway = self.namespace, lan.gateway

    def _view_env(self, binds: dict[str, Path]) -> dict[str, str]:
        """What the view-building script is told: each directory of ``binds`` (name ->
        directory here) to show at /mnt/<name>, plus the host's user directory."""
        # Deepest first: once /tmp is covered, a run directory under it cannot be reached.
        hidden = [*(str(path) for path in self.hidden), *HIDDEN]
        binds = {**binds, "user": self.user_dir}
        return {"HANDOFF_HOSTNAME": self.hostname, "HANDOFF_HIDE": " ".join(hidden),
                "HANDOFF_KEEP": " ".join(sorted({str(PROJECT_ROOT), sys.base_prefix})),
                "HANDOFF_BINDS": " ".join(f"{name}={source}" for name, source in binds.items())}

    def enter(self, binds: dict[str, Path], *command: str) -> tuple[list[str], dict[str, str]]:
        """argv and environment that run ``command`` inside this host, with each directory
        of ``binds`` visible at /mnt/<name> and nothing else of the run's files."""
        argv = [
            "ip", "netns", "exec", self.namespace,
            "unshare", "--uts", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private",
            "sh", "-c", _ENTER, "handoff-host", *command,
        ]
        return argv, {**self._worker_env(), **self._view_env(binds)}

    def entry(self, binds: dict[str, Path]) -> dict:
        """The same host, for a process forked from the zygote to move itself into
        (entering.move_into): its network namespace and the script that builds the view."""
        return {"netns": self.namespace, "script": _FORKED_VIEW,
                "script_env": {"PATH": os.environ.get("PATH", os.defpath), **self._view_env(binds)}}

    def _worker_env(self) -> dict[str, str]:
        """A process's environment in this host, whichever way it got there."""
        return {**worker_env(self.passed_env, USER_INSIDE), "TMPDIR": "/tmp"}

    async def start_worker(self, tracker: ProcessTracker, store: Path, stderr, cwd: Path, launch: Launch = Launch()):
        if not launch.forkable:  # the Node.js worker, or a browser's: spawned, as no fork of the zygote runs it
            argv, env = self.enter({"home": store}, *launch.command())
            return await tracker.spawn(*argv, stderr=stderr, env=env, **PIPES)
        if self.zygote is not None:
            return await self.zygote.fork(self._worker_env(), Path(USER_INSIDE), stderr, host=self.entry({"home": store}))
        argv, env = self.enter({"home": store}, sys.executable, "-m", WORKER_MODULE)
        return await tracker.spawn(*argv, stderr=stderr, env=env, **PIPES)

    def home(self, store: Path) -> str:
        return HOME_INSIDE

    async def close(self) -> None:
        await asyncio.to_thread(self.lan.remove_host, self.namespace)
