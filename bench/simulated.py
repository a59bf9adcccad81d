"""Simulated machines for a benchmark, made the way `handoff run` makes them for
`cross-machine-postgres`, and removed whatever happens.

One LAN (a bridge, handoff/hosts/network.py), a few namespace hosts on it whose workers
are forked from the bench's zygote and move themselves in (handoff/hosts/namespace.py),
a witness listening on the LAN's gateway (a host has its own loopback, so the bench's
shared witness on 127.0.0.1 is out of its reach), and a throwaway PostgreSQL listening
on the gateway too and trusting the LAN, with one schema per handoff
(handoff/stores/shared.py), as the coordinator's RunServices start them.
Every name carries this process's pid (handoff/leftovers.py), so a killed bench leaves
nothing that `handoff clean` does not find.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator

import psutil

from handoff.hosts.namespace import NamespaceHost
from handoff.hosts.network import Lan
from handoff.stores.postgres_server import ThrowawayPostgres
from handoff.stores.shared import RunDatabases

from bench.procs import Bench


def tree_cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) of a process, of its children that ended (the kernel adds
    them to it when it reaps them) and of those still alive: a PostgreSQL server's backends
    come and go with each connection. 0 for a process that is gone."""
    if pid is None:
        return 0.0
    try:
        top = psutil.Process(pid)
        times = top.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        for child in top.children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                own = child.cpu_times()
                total += own.user + own.system
        return total
    except psutil.NoSuchProcess:
        return 0.0


@dataclass
class Site:
    """What the hosts share: the witness (and its evidence), the database server."""

    hosts: list[NamespaceHost]
    witness_url: str
    evidence: Path
    witness_pid: int | None
    postgres_pid: int | None
    databases: RunDatabases

    def store_url(self, label: str) -> str:
        """A schema of its own for one handoff, reached from a host over the LAN."""
        self.databases.prepare(label, "postgres")
        return self.databases.url(label, "postgres", on_simulated_host=True)

    def services_cpu_s(self) -> tuple[float, float]:
        """CPU seconds so far of the witness and of the PostgreSQL server (with its backends)."""
        return tree_cpu_s(self.witness_pid), tree_cpu_s(self.postgres_pid)


@contextlib.asynccontextmanager
async def simulated_hosts(bench: Bench, count: int) -> AsyncIterator[Site]:
    """``count`` namespace hosts on one LAN with a witness and a PostgreSQL server on it."""
    zygote = await bench.zygote()
    # The LAN and the hosts are made synchronously (a few `ip` calls): a Ctrl-C cannot land
    # between one being made and this function holding it to remove.
    lan = Lan()
    hosts: list[NamespaceHost] = []
    server: ThrowawayPostgres | None = None
    witness_pid = None
    try:
        for number in range(count):
            # Named for the bench: each host's user directory (.state/hosts/host-scale-N) is
            # kept between runs, as a machine's would be, so the runtime unpacks there once.
            hosts.append(NamespaceHost(f"scale-{number}", lan, [bench.root], zygote))
        evidence = bench.root / "hosts-witness-evidence.jsonl"
        witness_url, witness_pid = await bench.start_witness(evidence, "hosts-witness", host=lan.gateway)
        server = ThrowawayPostgres(["127.0.0.1", lan.gateway], trusted_networks=(f"{lan.subnet}.0/24",))
        await asyncio.to_thread(server.prepare)
        server.launch()  # from the loop's thread: the server dies with this process
        url = await asyncio.to_thread(server.wait_ready)
        databases = RunDatabases(bench.root, url, lan.gateway, owned=True)
        yield Site(hosts, witness_url, evidence, witness_pid, server.process.pid, databases)
    finally:
        # The workers are gone by now (each step kills its tree); then the witness, the
        # database (its own shutdown, which removes its shared memory) and the network.
        if witness_pid is not None:
            bench.tracker.kill_tree(witness_pid)
        if server is not None:
            server.stop()  # synchronously, so a second Ctrl-C cannot skip it; its schemas go with its files
        for host in hosts:
            await host.close()
        lan.close()
