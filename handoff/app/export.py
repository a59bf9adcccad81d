"""`handoff export k8s`: a scenario as Kubernetes manifests (handoff/export/k8s.py), its
options checked first."""

from __future__ import annotations

import re
from pathlib import Path

from handoff import backends, inputs
from handoff import scenario_files
from handoff.app.outputs import read_by_the_tool
from handoff.errors import UserError
from handoff.export import k8s
from handoff.protocol import DEFAULT_RUN_BACKEND

# What a container image reference may hold (lower-case repository path, optional tag and
# digest); anything else would make manifests a cluster rejects, or YAML of another shape.
IMAGE = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
                   r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+:[a-f0-9]{32,})?")


EXPORTED_BACKENDS = (backends.WITNESS, backends.WITNESS_BYOK)  # what a cluster's steps can ask: the witness


def k8s_manifests(name: str, image: str, store: str | None, fact: str, topic: str, output: Path | None,
                  backend: str = backends.WITNESS) -> str:
    """The manifests' text for the scenario ``name``; a UserError names an option that is wrong."""
    if backend not in EXPORTED_BACKENDS:
        raise UserError(f"--backend {backend}: choose one of {', '.join(EXPORTED_BACKENDS)} (the exported steps ask "
                        f"the witness the manifests deploy)")
    chosen_backend = backends.choose(backend, None, None, None, api_model=DEFAULT_RUN_BACKEND.model)
    [chosen] = scenario_files.select([name])
    if store is not None:
        inputs.network_url(store, "--store", ("postgres", "postgresql"), "postgresql://user@host:5432/db")
    if not IMAGE.fullmatch(image):
        raise UserError(f"--image {image!r}: not an image reference (registry/name[:tag][@digest], no spaces or line "
                        f"breaks), e.g. registry.example/copilot-handoff:standalone")
    if output is not None:
        inputs.writable_file(output, "--output", keep=read_by_the_tool(None, name))
    return k8s.render(chosen, k8s.manifests(chosen, image, inputs.fact(fact, topic), store, chosen_backend),
                      str(output or "FILE"))
