"""Placing a scenario's steps on hosts: which hosts it gets, and why it cannot run here.

A scenario names its hosts by kind (``[hosts] b = "namespace"``, ``"ssh"``,
``"container"`` or ``"pod"``); ``--host NAME=ssh://`` turns one into a real machine. What a host can do is asked of the host's properties
(handoff/hosts/base.py); nothing here looks at a host's class. A step that names a
runtime or SDK version runs that version or not at all: one that is not installed makes
the scenario *skipped*, with the command that installs it.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import urlsplit

from handoff import versions
from handoff.chat.browser import browser_problem
from handoff.coordinator.services import RunServices
from handoff.faults.kinds import KINDS, Needs
from handoff.hosts.base import BROWSER_WORKER_MODULE, WORKER_MODULE, Host, Launch
from handoff.hosts.capability import missing_capability
from handoff.hosts.container import ContainerHost, node_problem
from handoff.hosts.local import LocalHost
from handoff.hosts.namespace import NamespaceHost
from handoff.hosts.played import PlayedPodHost
from handoff.hosts.ssh import NamespaceSshHost, SshHost
from handoff.protocol import COPILOT
from handoff.scenario import Scenario, Step
from handoff.words import ENGINE_HOST_KINDS, FaultPoint, HostKind


def why_not_runnable(scenario: Scenario, services: RunServices) -> str | None:
    """The reason this machine cannot run ``scenario`` (it is then *skipped*), or None."""
    settings = services.settings
    for step in scenario.steps:
        try:
            step_versions(step)
        except versions.NotAvailable as missing:
            return f"step '{step.name}': {missing}"
    if any(step.device for step in scenario.steps) and (problem := browser_problem()):
        return problem
    plans = [plan for step in scenario.steps for plan in step.faults]
    if any(plan.at == FaultPoint.MID_TURN for plan in plans) and not settings.backend.seen_on_the_wire:
        return "a fault while the model answers needs the witness or the relay to hold the answer (not the Copilot service)"
    if any(KINDS[plan.kind].needs == Needs.POSTGRES for plan in plans) and settings.store_url:
        return "a store outage stops the run's own PostgreSQL; a server named with --store is not the tool's to stop"
    for step in scenario.steps:
        kind = scenario.hosts.get(step.host, HostKind.LOCAL)
        problem = node_problem() if versions.is_node(step.sdk) and kind == HostKind.CONTAINER else None
        if problem and step.host not in settings.remote_hosts:
            return f"step '{step.name}': the Node.js worker in a container: {problem}"
    for name, kind in scenario.hosts.items():
        if name in settings.remote_hosts:
            continue
        if settings.backend.kind == COPILOT:
            return f"host '{name}' ({kind}): a simulated host has no route to the Copilot service on the internet"
        problem = missing_capability(kind) or (None if services.lan else services.lan_problem)
        if problem is None and kind in ENGINE_HOST_KINDS:
            problem = services.containers.problem
        if problem is None and kind == HostKind.POD and services.containers.engine.name != "podman":
            problem = f"pods are played by `podman kube play`; {services.containers.engine.name} has no such command"
        if problem:
            return f"host '{name}' ({kind}): {problem}"
    return None


def step_versions(step: Step) -> tuple[Launch, Path | None]:
    """How the step's worker is started, and the runtime executable it is told to use (None:
    the run's default), for the versions the step names; NotAvailable when one is not
    installed."""
    runtime = versions.runtime(step.runtime) if step.runtime else None
    sdk = versions.sdk(step.sdk) if step.sdk else None
    launch = Launch(python=sdk.python if sdk else None, runtime_cache=runtime.cache if runtime else None,
                    node_worker=sdk.node_worker if sdk else None,
                    module=BROWSER_WORKER_MODULE if step.device else WORKER_MODULE)
    return launch, runtime.executable if runtime else None


def open_hosts(scenario: Scenario, services: RunServices, workdir: Path, hosts: dict[str, Host]) -> None:
    """Make the hosts of one scenario, by name, into ``hosts`` (``local`` always among
    them). Each scenario gets hosts of its own (a namespace host per name); the caller
    closes every host in ``hosts`` when the scenario ends, also the ones made before one
    failed to come up."""
    settings = services.settings
    hosts[HostKind.LOCAL] = LocalHost(HostKind.LOCAL, services.zygote)
    # One prefix for the scenario's containers and volumes (its hosts share the volumes),
    # with a token of its own: a scenario named twice in a run gets two sets.
    containers = f"{services.containers.prefix}-{scenario.name}-{secrets.token_hex(2)}"
    witness = urlsplit(services.witness_url)
    for name, kind in scenario.hosts.items():
        if name in settings.remote_hosts:
            hosts[name] = SshHost(name, settings.remote_hosts[name], witness.hostname, witness.port)
        elif kind == HostKind.NAMESPACE:
            hosts[name] = NamespaceHost(name, services.lan, [services.run_dir], services.zygote)
        elif kind == HostKind.CONTAINER:
            hosts[name] = ContainerHost(name, services.containers.setup, containers)
        elif kind == HostKind.POD:
            hosts[name] = PlayedPodHost(name, services.containers.setup, containers, scenario.name)
        else:
            machine = NamespaceHost(name, services.lan, [services.run_dir])
            hosts[name] = NamespaceSshHost(name, machine, workdir / f"ssh-{name}", witness.hostname, witness.port)
        hosts[name].passed_env = _passed(settings.backend.token_env)
    hosts[HostKind.LOCAL].passed_env = _passed(settings.backend.token_env)


def _passed(token_env: str | None) -> tuple[str, ...]:
    """The scrubbed variables a worker gets: the Copilot token's, when that is the backend."""
    return (token_env,) if token_env else ()
