"""`handoff export k8s`: a scenario as Kubernetes manifests (handoff/export/k8s.py), its
options checked first."""

from __future__ import annotations

from pathlib import Path

from handoff import inputs
from handoff import scenario_files
from handoff.export import k8s


def k8s_manifests(name: str, image: str, store: str | None, fact: str, topic: str, output: Path | None) -> str:
    """The manifests' text for the scenario ``name``; a UserError names an option that is wrong."""
    [chosen] = scenario_files.select([name])
    if store is not None:
        inputs.network_url(store, "--store", ("postgres", "postgresql"), "postgresql://user@host:5432/db")
    if output is not None:
        inputs.writable_file(output, "--output", keep=tuple(p for p in (Path(name),) if p.is_file()))
    return k8s.render(chosen, k8s.manifests(chosen, image, inputs.fact(fact, topic), store), str(output or "FILE"))
