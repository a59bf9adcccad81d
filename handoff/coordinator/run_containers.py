"""The container side of one run: the engine checked, the image there, a network, a lifeline.

The network is the simulated LAN, which podman's containers join (each container host a
machine on it, handoff/hosts/container.py); docker's need an engine network of their own.

Started by the run's services (coordinator/services.py) when a scenario has a container
host. Anything that fails here — no engine, a Docker daemon that does not answer, an image
that cannot be built, a Python that does not match — becomes the reason those scenarios
are skipped, with the fix; the rest of the run goes on.

It joins the engine's parts (handoff/containers/) to the container hosts' setup
(handoff/hosts/container.py), so it stands with the run's other services, above both.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from pathlib import Path

from handoff import owners
from handoff.containers import image
from handoff.containers.engine import NAME_PREFIX, Engine, EngineError
from handoff.containers.lifeline import Lifeline
from handoff.containers.network import ContainerNetwork
from handoff.hosts.container import ContainerSetup
from handoff.hosts.network import Lan
from handoff.processes import ProcessTracker


def _progress(line: str) -> None:
    print(f"note: {line}", file=sys.stderr, flush=True)


class RunContainers:
    def __init__(self, engine: Engine, run_dir: Path, runtime: Path):
        self.engine = engine
        self.run_dir = run_dir
        self.runtime = runtime
        # Every container, volume and network of this run is named so (owners.tag(): its
        # owner), and the prefix is in the run's ledger before any of them is made.
        self.prefix = f"{NAME_PREFIX}{owners.tag()}{secrets.token_hex(3)}"
        owners.note(owners.ENGINE_PREFIX, self.prefix)
        self.network = ContainerNetwork(engine, f"{self.prefix}-net")
        self.lifeline = Lifeline()
        self.setup: ContainerSetup | None = None
        self.problem: str | None = None  # why container scenarios cannot run here

    async def create_network(self, tracker: ProcessTracker, lan_problem: str | None, pods: bool = False) -> str | None:
        """For an engine that cannot join the LAN, or a run with pods (podman cannot put a
        pod in a namespace of ours, hosts/played.py), first: the engine is asked whether it
        works and its network is made, so that the database knows the subnet to let in.
        Returns that subnet (None: there is none)."""
        self.problem = lan_problem
        if self.problem is None and (pods or not self.engine.joins_namespaces):
            self.problem = await asyncio.to_thread(self.engine.problem)
            if self.problem is None:
                try:
                    await self.network.create(tracker)
                except EngineError as error:
                    self.problem = f"the container network could not be made: {error}"
        return self.network.subnet

    async def start(self, tracker: ProcessTracker, lan: Lan) -> None:
        """The engine checked (if creating the network did not), the image (built now if
        this machine has never built it) and the lifeline."""
        if self.problem is None and self.network.subnet is None:
            self.problem = await asyncio.to_thread(self.engine.problem)
        if self.problem is not None:
            return
        try:
            recipe = image.recipe()
            self.problem = image.python_problem(recipe)
            if self.problem is None:
                await image.ensure(self.engine, tracker, _progress, recipe)
        except (image.ImageError, EngineError) as error:
            self.problem = f"{error} (then `make containers`)"
        if self.problem is not None:
            return
        lifeline = await self.lifeline.start(lan.gateway)
        joins = self.engine.joins_namespaces
        self.setup = ContainerSetup(self.engine, recipe.tag, self.network.name if self.network.subnet else None,
                                    lifeline, self.runtime, self.run_dir / "containers", lan=lan if joins else None)

    def close(self) -> None:
        """Whatever a scenario did not remove (an interrupted one): this run's pods, then
        containers, then volumes, then its network. (The lifeline was let go of in the event loop.)"""
        if self.setup is None and self.network.subnet is None:  # nothing was made in the engine
            return
        for kind in ("pod", "container", "volume"):
            self.engine.remove_sync(kind, [name for name in self.engine.names(kind) if name.startswith(self.prefix)])
        self.network.close()
