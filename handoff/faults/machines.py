"""Faults of the machines a session lives on: the database server goes away, a host loses
its network, the disk fills. Each heals: the server starts again, the route comes back,
the space is freed."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
from dataclasses import dataclass

from handoff import leftovers, owners
from handoff.faults.base import Fault, FaultDidNotApply, FaultTarget
from handoff.words import FaultKind

FILLER = ".handoff-disk-filler"
SMALL_DISK = "4m"  # the step's home as a file system of its own: room for a session's few files


@dataclass(frozen=True)
class StoreOutage(Fault):
    """The run's throwaway PostgreSQL shuts down (a fast shutdown, as an operator's stop
    or a failover does) and starts again on the same data and port at heal."""

    at: str
    turn: int = 1
    heal_after: float | None = None
    kind = FaultKind.STORE_OUTAGE

    @classmethod
    def from_plan(cls, plan) -> "StoreOutage":
        return cls(plan.at, plan.turn, plan.heal)

    async def inject(self, target: FaultTarget) -> str:
        if target.database is None:
            raise FaultDidNotApply("store-outage: the run has no throwaway PostgreSQL to stop (a server named with "
                                   "--store is not the tool's to stop)")
        await asyncio.to_thread(target.database.shut_down)
        return "PostgreSQL shut down (fast)"

    async def heal(self, target: FaultTarget) -> str:
        target.database.launch()  # from the loop's thread: the server dies with the run
        await asyncio.to_thread(target.database.wait_ready)
        return "PostgreSQL started again on the same data and port"


@dataclass(frozen=True)
class StoreRestart(StoreOutage):
    """The run's throwaway PostgreSQL restarts while the step's worker waits at a fault
    point: a fast shutdown, then a start on the same data and port, both done before the
    worker goes on. Nothing is left to heal: the server is back, but every connection
    that was open to it is gone, and the worker's next call finds out on its own."""

    kind = FaultKind.STORE_RESTART

    @classmethod
    def from_plan(cls, plan) -> "StoreRestart":
        return cls(plan.at, plan.turn)

    async def inject(self, target: FaultTarget) -> str:
        stopped = await super().inject(target)
        started = await super().heal(target)
        return f"{stopped}; {started}"

    async def heal(self, target: FaultTarget) -> None:
        return None  # started again at the injection already


@dataclass(frozen=True)
class Partition(Fault):
    """The step's simulated host loses its route to the database, to the model, or to
    everything on the run's LAN: its own firewall refuses those connections (TCP reset),
    as a broken route or a closed port does. (Dropped packets would leave connections
    hanging for minutes; a reset makes each attempt fail at once.)"""

    at: str
    turn: int = 1
    target: str = "database"
    heal_after: float | None = None
    kind = FaultKind.PARTITION

    @classmethod
    def from_plan(cls, plan) -> "Partition":
        return cls(plan.at, plan.turn, plan.target or "database", plan.heal)

    def _rule(self, target: FaultTarget) -> list[str]:
        gateway = target.host.lan_gateway
        if self.target == "everything":
            return ["-d", gateway, "-j", "REJECT"]
        port = target.ports.get(self.target)
        if port is None:
            raise FaultDidNotApply(f"partition: this run has no {self.target} for the host to be cut off from")
        return ["-p", "tcp", "-d", gateway, "--dport", str(port), "-j", "REJECT", "--reject-with", "tcp-reset"]

    def _iptables(self, target: FaultTarget, change: str) -> None:
        namespace = getattr(target.host, "netns", None)
        if namespace is None:
            raise FaultDidNotApply("partition: the step's host is not a simulated host with a network of its own")
        done = subprocess.run(["ip", "netns", "exec", namespace, "iptables", change, "OUTPUT", *self._rule(target)],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise FaultDidNotApply(f"partition: iptables failed: {done.stderr.strip()}")

    async def inject(self, target: FaultTarget) -> str:
        await asyncio.to_thread(self._iptables, target, "-I")
        return f"host {target.host.name} cut off from {self.target} (connections refused)"

    async def heal(self, target: FaultTarget) -> str:
        await asyncio.to_thread(self._iptables, target, "-D")
        return f"host {target.host.name} reaches {self.target} again"


@dataclass(frozen=True)
class DiskFull(Fault):
    """The step's home becomes a small file system of its own (its files kept) before the
    step starts; at the fault point it is filled to the last byte; at heal the filler
    goes. The file system stays until the scenario ends, so later steps find the session."""

    at: str
    turn: int = 1
    heal_after: float | None = None
    kind = FaultKind.DISK_FULL

    @classmethod
    def from_plan(cls, plan) -> "DiskFull":
        return cls(plan.at, plan.turn, plan.heal)

    async def prepare(self, target: FaultTarget) -> None:
        await asyncio.to_thread(small_disk, target.home)

    async def inject(self, target: FaultTarget) -> str:
        filled = await asyncio.to_thread(_fill, target.home)
        return f"the home's file system filled ({filled} bytes of filler)"

    async def heal(self, target: FaultTarget) -> str:
        size = (target.home / FILLER).stat().st_size
        (target.home / FILLER).unlink(missing_ok=True)
        return f"{size} bytes freed"


def small_disk(home) -> None:
    """Mount a small tmpfs over ``home``, keeping what is in it. The mount is named for the
    run's owner and in its ledger, so one a killed run leaves is found (leftovers.py)."""
    if os.path.ismount(home):
        return
    saved = home.with_name(home.name + ".before-small-disk")
    home.rename(saved)
    home.mkdir()
    owners.note(owners.MOUNT, str(home))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK}", f"{owners.MOUNT_PREFIX}{owners.tag()}",
                           str(home)], capture_output=True, text=True)
    if done.returncode != 0:
        owners.strike(owners.MOUNT, str(home))
        home.rmdir()
        saved.rename(home)
        raise FaultDidNotApply(f"disk-full: cannot mount a small file system on the home: {done.stderr.strip()}")
    subprocess.run(["cp", "-a", f"{saved}/.", str(home)], check=True)
    subprocess.run(["rm", "-rf", str(saved)], check=True)


def _fill(home) -> int:
    written = 0
    chunk = b"\0" * 65536
    with open(home / FILLER, "ab", buffering=0) as filler:
        while True:
            try:
                written += filler.write(chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC or len(chunk) == 1:
                    break
                chunk = chunk[: len(chunk) // 2]  # fill the last few bytes too
    return written


def release_small_disk(home) -> None:
    """Unmount the small file system of ``home`` (when the scenario ends): the processes
    of this run still using it are killed and reaped first (leftovers.unmount)."""
    if os.path.ismount(home):
        leftovers.unmount(str(home), os.getpid())
