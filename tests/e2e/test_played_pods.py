"""Pod hosts: each step played from its exported Kubernetes objects by `podman kube play`
(hosts/played.py), in the default matrix. Their verdicts are checked with every other
scenario's (test_ladder.py); here, that each step ran in a pod of its own as exported, and
that nothing of them is left in the engine; and the export's witness Deployment, played
on its own."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import yaml

from handoff import leftovers, owners, scenario_files
from handoff.containers import image
from handoff.containers.engine import Engine
from handoff.export import k8s
from handoff.hosts.capability import missing_capability
from handoff.hosts.kube_play import playable_witness
from handoff.hosts.played import mounted_software
from handoff.hosts.pod import HOME, WITNESS_PORT
from handoff.runtime_locator import locate_runtime
from handoff.words import Verdict

pytestmark = pytest.mark.e2e
ENGINE_KINDS = ("pod", "container", "volume", "network")


def test_each_step_ran_in_a_pod_of_its_own_from_its_mounted_spec(matrix):
    a, b = matrix.ran("cross-pod-claim").values()
    assert (a.ready.hostname, b.ready.hostname) == ("pod-a-1", "pod-b-1")
    assert (a.ready.pid, b.ready.pid) != (None, None) and a.ready.address != b.ready.address
    assert not a.ready.address.startswith("10.213.")  # on podman's bridge, not in a namespace of the LAN
    assert a.ready.home == b.ready.home == HOME
    assert b.eventlog.closed_before_resume is True
    [turn] = matrix.asked("cross-pod-claim")
    assert turn.verdict == Verdict.KEPT


def test_pods_reach_postgresql_at_the_lan_s_gateway(matrix):
    a, b = matrix.ran("cross-pod-postgres").values()
    assert a.ready.store and a.ready.store == b.ready.store
    assert "127.0.0.1" not in a.ready.store
    [turn] = matrix.asked("cross-pod-postgres")
    assert turn.verdict == Verdict.KEPT


def test_the_pods_reached_the_witness_by_its_service_s_name(matrix):
    """Each step's requests reached the run's witness, tagged with the step: the worker is
    told the witness by its Service's name, which only the pod's host alias resolves."""
    matrix.ran("cross-pod-claim")
    record = matrix.scenario("cross-pod-claim")
    steps = {call.step for call in record.calls}
    assert steps == {"A", "B"}


def test_nothing_of_the_pods_is_left_in_the_engine(matrix):
    matrix.ran("cross-pod-claim")
    assert [left for left in leftovers.find(of=os.getpid()) if left.kind in ENGINE_KINDS] == []


def test_the_exported_witness_deployment_answers_the_tokens_its_secret_holds(tmp_path):
    """The witness's own objects, played: the image's command serves on the Service's port,
    and the tokens reach it from their Secret through `secretKeyRef`: a step's token is
    answered, any other refused."""
    problem = missing_capability("pod") or Engine().problem()
    if problem:
        pytest.skip(problem)
    scenario = scenario_files.load(scenario_files.available()["cross-pod-claim"])
    objects = k8s.manifests(scenario, "registry.example/copilot-handoff:1")
    tokens = json.loads(next(item for item in objects if item["metadata"]["name"] == k8s.WITNESS_TOKENS)
                        ["stringData"]["tokens.json"])
    engine, prefix = Engine(), f"handoff-{owners.tag()}{secrets.token_hex(3)}"
    owners.note(owners.ENGINE_PREFIX, prefix)
    witness = playable_witness(objects, prefix, image.recipe().tag, mounted_software(locate_runtime()))
    path = tmp_path / "witness.yaml"
    path.write_text(yaml.safe_dump(witness.deployment), encoding="utf-8")
    network = f"{prefix}-net"
    try:
        engine.run_sync("network", "create", "--disable-dns", network)
        for name, content in witness.secrets.items():
            (tmp_path / name).write_text(content, encoding="utf-8")
            engine.run_sync("secret", "create", name, str(tmp_path / name))
        engine.run_sync("kube", "play", "--network", network, str(path))
        address = engine.run_sync("inspect", "--format", f"{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}",
                                  witness.container).strip()
        base = f"http://{address}:{WITNESS_PORT}"
        answered = _models(base, next(iter(tokens)))
        assert answered[0] == 200 and "claude-haiku-4.5" in answered[1]
        assert _models(base, "gho_" + "0" * 36)[0] == 401
    finally:
        for kind, names in (("pod", [f"{witness.deployment['metadata']['name']}-pod-0"]), ("volume", [
                name for name in engine.names("volume") if name.startswith(prefix)]), ("network", [network])):
            engine.remove_sync(kind, names)
        for name in witness.secrets:
            subprocess.run(engine.command("secret", "rm", name), env=engine.env(), capture_output=True, timeout=30)
    assert [left for left in leftovers.find(of=os.getpid()) if left.kind in ENGINE_KINDS] == []


def _models(base: str, token: str, attempts: int = 600) -> tuple[int, str]:
    """GET /models with ``token``, once the witness listens (its interpreter may take a
    few seconds to start: up to a minute, tried every 0.1 s)."""
    request = urllib.request.Request(f"{base}/models", headers={"Authorization": f"Bearer {token}"})
    for _ in range(attempts):
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"the witness at {base} did not answer within a minute")
