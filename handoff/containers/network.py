"""The container network of one run, on an engine that cannot join the simulated LAN.

Podman's containers join their host's namespace on the LAN (handoff/hosts/container.py);
docker's cannot, so a run on docker that has container hosts gets an engine network of its own (a bridge, named
``handoff-<owner>...``, with a /24 that overlaps nothing on this machine). Its containers
reach the run's services — the witness model, PostgreSQL, the lifeline — at the simulated
LAN's gateway (``10.213.X.1``), where those already listen for namespace hosts: an
address of this machine that the container's packets reach through their own network's
gateway, routed by this machine as a router joins two LANs. Never the loopback: a
container's 127.0.0.1 is its own.

Why not listen on the container network's gateway instead: the engine brings that
address up only when the network's first container starts, after the services must be
listening; and one address for both kinds of simulated machine keeps one way to the
witness.
"""

from __future__ import annotations

import ipaddress
import random
import subprocess

from handoff.containers.engine import Engine, EngineError
from handoff.processes import ProcessTracker

PREFIX = "10.214"
ATTEMPTS = 5


def _subnets_in_use() -> list[ipaddress.IPv4Network]:
    out = subprocess.run(["ip", "-o", "-4", "addr"], capture_output=True, text=True).stdout
    return [ipaddress.ip_interface(line.split()[3]).network for line in out.splitlines()]


class ContainerNetwork:
    def __init__(self, engine: Engine, name: str):
        self.engine = engine
        self.name = name  # named for the run's owner (owners.py), so a killed run's is found
        self.subnet: str | None = None
        self._made = False

    async def create(self, tracker: ProcessTracker) -> None:
        """Make the network on a free subnet; an engine that already uses the chosen one
        (for a network with no container up, so no address here shows it) gets another."""
        used = _subnets_in_use()
        free = [f"{PREFIX}.{x}.0/24" for x in range(1, 255)
                if not any(ipaddress.ip_network(f"{PREFIX}.{x}.0/24").overlaps(net) for net in used)]
        random.shuffle(free)
        problem = f"no free {PREFIX}.X.0/24 subnet for the container network"
        for subnet in free[:ATTEMPTS]:
            dns = ["--disable-dns"] if self.engine.name == "podman" else []
            try:
                await self.engine.run(tracker, "network", "create", *dns, "--subnet", subnet, self.name)
            except EngineError as error:
                problem = str(error)
                continue
            self.subnet, self._made = subnet, True
            return
        raise EngineError(problem)

    def close(self) -> None:
        if self._made:
            self.engine.remove_sync("network", [self.name])
            self._made = False
