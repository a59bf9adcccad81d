"""What a step's runtime shows the model's endpoint, given before its worker starts.

A BYOK provider needs nothing more than the spec carries. On the Copilot-API path the
runtime sends a GitHub token instead, and the witness accepts only tokens it issued: it
issues one to each step, which is how every request of the step, even one the runtime
sends on its own with none of the app's headers (a compaction's), is attributed to it."""

from __future__ import annotations

import msgspec

from handoff.protocol import WITNESS_COPILOT_API, WorkerSpec
from handoff.witness.control import WitnessControl


async def with_credentials(spec: WorkerSpec, witness: WitnessControl | None) -> WorkerSpec:
    if spec.backend.kind != WITNESS_COPILOT_API or witness is None:
        return spec
    token = await witness.issue(spec.owner, spec.tags)
    return msgspec.structs.replace(spec, witness_token=token)
