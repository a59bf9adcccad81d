"""What a step's runtime shows the model's endpoint, given before its worker starts.

A BYOK provider needs nothing more than the spec carries. On the Copilot-API path the
runtime sends a GitHub token instead, and the witness accepts only tokens it issued: it
issues one to each step, which is how every request of the step, even one the runtime
sends on its own with none of the app's headers (a compaction's), is attributed to it.
Where no coordinator runs the steps (a cluster's manifests, export/k8s.py), the tokens are
made ahead and the witness is given them all when it starts."""

from __future__ import annotations

import msgspec

from handoff.protocol import WITNESS_COPILOT_API, WorkerSpec
from handoff.witness import copilot_api
from handoff.witness.control import WitnessControl


async def with_credentials(spec: WorkerSpec, witness: WitnessControl | None) -> WorkerSpec:
    if spec.backend.kind != WITNESS_COPILOT_API or witness is None:
        return spec
    token = await witness.issue(spec.owner, spec.tags)
    return msgspec.structs.replace(spec, witness_token=token)


def made_ahead(spec: WorkerSpec) -> tuple[WorkerSpec, dict[str, copilot_api.Holder]]:
    """The spec with a token of its own, and that token with whom the witness is to read
    its requests as; on BYOK the spec as it is, and no token."""
    if spec.backend.kind != WITNESS_COPILOT_API:
        return spec, {}
    token = copilot_api.new_token()
    return (msgspec.structs.replace(spec, witness_token=token),
            {token: copilot_api.Holder(spec.owner, tuple(sorted(spec.tags.items())))})
