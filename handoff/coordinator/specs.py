"""Building the WorkerSpec for one step: a pure function of the step, its host and the
run's settings, shared by the coordinator and the benchmarks."""

from __future__ import annotations

from handoff.fact import Fact
from handoff.hosts.base import Host
from handoff.protocol import Backend, Hold, WorkerSpec
from handoff.scenario import Step
from handoff.witness.tags import SUMMARY_HEADER, request_tags
from handoff.words import StepProvider


def worker_spec(scenario: str, step: Step, host: Host, home: str, session_id: str | None, *, fact: Fact,
                backend: Backend, runtime_path: str, witness_url: str, store_url: str | None = None,
                registry_url: str | None = None, app_key: str = "", turn_timeout: float = 60.0,
                known_good: tuple[tuple[str, str], ...] = (), holds: tuple[Hold, ...] = (),
                lease_clock: float | None = None, run_token: str = "", devices: str = "") -> WorkerSpec:
    """What the worker of ``step`` on ``host`` is told. ``home`` is its COPILOT_HOME as seen
    on that host; ``witness_url`` the witness as seen from there; ``runtime_path`` the
    executable of the runtime version the step runs; ``devices`` where the host keeps the
    profiles of a step's browser ("" in the home)."""
    return WorkerSpec(
        scenario=scenario, step=step.name, host=host.name,
        runtime_path="" if host.has_own_runtime else runtime_path,
        home=home, witness_url=witness_url, fact_value=fact.value, fact_topic=fact.topic, actions=step.actions,
        backend=backend, session_id=session_id,
        tags={**request_tags(scenario, step.name, host.name, fact, run_token),
              **({SUMMARY_HEADER: step.summary} if step.summary else {})},
        store=store_url, owner=step.principal, guarded=step.guarded, reuse=step.reuse, registry=registry_url,
        without_provider=step.provider == StepProvider.OMITTED, app_key=app_key, holds=holds,
        secrets={} if host.carries_environment else backend.secret_env(),
        runtime_version=step.runtime, sdk_version=step.sdk, turn_timeout=turn_timeout, known_good=known_good,
        lease_clock=lease_clock, tools=step.tools, settings=dict(step.settings),
        filler_turns=step.filler_turns, device=step.device, keeps=step.keeps, devices=devices,
    )
