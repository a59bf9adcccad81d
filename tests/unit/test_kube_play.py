"""The transformation that makes a step's exported objects playable by podman
(hosts/kube_play.py): the Job as a Pod, the spec's Secret as a ConfigMap, the Service's
name as a host alias, names the run's, the local image with the software mounted; and
nothing else changed. A scenario on pods is held to what a cluster's manifests can hold."""

from __future__ import annotations

import json
from pathlib import Path

import kubernetes_validate
import pytest

from handoff import scenario_files
from handoff.errors import UserError
from handoff.hosts import pod
from handoff.hosts.kube_play import Software, playable
from handoff.protocol import SPEC_OPTION

SPEC = json.dumps({"scenario": "s", "step": "A", "fact_value": "x"})
LABELS = {"app.kubernetes.io/name": pod.LABEL, f"{pod.LABEL}/step": "a"}
SOFTWARE = Software(mounts=(("/here/handoff", "/here/handoff"), ("/here/site", "/here/site")), python="python3.11",
                    python_path="/here:/here/site", runtime="/here/runtime/copilot")


def _played(name: str = "handoff-1-s-a1", claim: str | None = "handoff-1-s-home-shared") -> tuple[dict, dict]:
    exported = pod.step_objects(SPEC, "registry.example/copilot-handoff:1", name, LABELS, claim)
    config_map, played = playable(exported, name, "pod-a-1", "localhost/worker:1", SOFTWARE, "10.213.4.1")
    return config_map, played


def _exported_pod_spec(name: str, claim: str | None) -> dict:
    (job,) = [item for item in pod.step_objects(SPEC, "registry.example/copilot-handoff:1", name, LABELS, claim)
              if item["kind"] == "Job"]
    return job["spec"]["template"]["spec"]


def test_the_job_becomes_a_pod_and_the_spec_s_secret_a_config_map_with_the_same_data():
    config_map, played = _played()
    assert (config_map["kind"], played["kind"]) == ("ConfigMap", "Pod")
    assert json.loads(config_map["data"][pod.SPEC_FILE]) == json.loads(SPEC)
    assert played["metadata"] == {"name": "handoff-1-s-a1", "labels": LABELS}
    spec_volume = next(volume for volume in played["spec"]["volumes"] if "configMap" in volume)
    assert spec_volume["configMap"] == {"name": config_map["metadata"]["name"]}
    assert not any("secret" in volume for volume in played["spec"]["volumes"])


def test_only_the_listed_changes_are_made_to_the_pod():
    """The command's arguments, the environment the export sets, resources, mount paths,
    the restart policy and the claim are as exported."""
    exported = _exported_pod_spec("handoff-1-s-a1", "handoff-1-s-home-shared")
    _, played = _played()
    spec = played["spec"]
    (worker,), (was,) = spec["containers"], exported["containers"]
    assert worker["command"] == ["python3.11", *was["command"][1:]]
    assert worker["command"][-2:] == [SPEC_OPTION, f"{pod.SPEC_DIR}/{pod.SPEC_FILE}"]
    assert worker["env"][:len(was["env"])] == was["env"]
    assert {item["name"]: item["value"] for item in worker["env"][len(was["env"]):]} == {
        "PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": "/here:/here/site",
        "COPILOT_CLI_PATH": "/here/runtime/copilot"}
    assert worker["resources"] == was["resources"] and worker["image"] == "localhost/worker:1"
    assert [m["mountPath"] for m in worker["volumeMounts"]] == [m["mountPath"] for m in was["volumeMounts"]] + [
        "/here/handoff", "/here/site"]
    assert all(m["readOnly"] for m in worker["volumeMounts"][len(was["volumeMounts"]):])
    assert spec["restartPolicy"] == exported["restartPolicy"] == "Never"
    claims = [volume["persistentVolumeClaim"] for volume in spec["volumes"] if "persistentVolumeClaim" in volume]
    assert claims == [{"claimName": "handoff-1-s-home-shared"}]
    assert spec["hostAliases"] == [{"ip": "10.213.4.1", "hostnames": [pod.WITNESS_NAME]}]
    assert spec["hostname"] == "pod-a-1"


def test_no_volume_name_is_shared_by_two_pods():
    """podman names an emptyDir's volume by the volume's name: two pods' `user` would be one."""
    _, first = _played("handoff-1-s-a1", None)
    _, second = _played("handoff-1-s-b1", None)
    names = [{volume["name"] for volume in played["spec"]["volumes"]} for played in (first, second)]
    assert not names[0] & names[1]
    for played in (first, second):  # every mount names a volume of its pod
        volumes = {volume["name"] for volume in played["spec"]["volumes"]}
        assert {mount["name"] for mount in played["spec"]["containers"][0]["volumeMounts"]} <= volumes


def test_the_played_objects_are_still_kubernetes_objects():
    for item in _played():
        kubernetes_validate.validate(item, kubernetes_validate.latest_version(), strict=True)


def test_the_exported_objects_are_not_changed_by_playing_them():
    exported = pod.step_objects(SPEC, "registry.example/copilot-handoff:1", "job", LABELS, None)
    before = json.dumps(exported, sort_keys=True)
    playable(exported, "job", "pod-a-1", "localhost/worker:1", SOFTWARE, "10.213.4.1")
    assert json.dumps(exported, sort_keys=True) == before


def _scenario(tmp_path: Path, hosts: str, step_b: str = "") -> Path:
    path = tmp_path / "pods.toml"
    path.write_text(f'title = "t"\nproves = "p"\ndoes_not_prove = "n"\n[hosts]\n{hosts}\n'
                    '[[steps]]\nname = "A"\nhost = "a"\nactions = ["create", "tell", "close"]\n'
                    f'[[steps]]\nname = "B"\nactions = ["resume", "ask", "close"]\nexpect = "kept"\n{step_b}',
                    encoding="utf-8")
    return path


def test_a_scenario_on_pods_runs_every_step_on_a_pod(tmp_path: Path):
    with pytest.raises(UserError, match="step 'B' runs on 'local'.*every step a pod's"):
        scenario_files.load(_scenario(tmp_path, 'a = "pod"'))
    loaded = scenario_files.load(_scenario(tmp_path, 'a = "pod"\nb = "pod"', 'host = "b"\n'))
    assert [step.host for step in loaded.steps] == ["a", "b"]


def test_a_scenario_on_pods_holds_nothing_a_cluster_s_manifests_cannot(tmp_path: Path):
    copied = 'host = "b"\nhome = "copied"\n'
    with pytest.raises(UserError, match="cannot hold it: step 'B' has home 'copied'"):
        scenario_files.load(_scenario(tmp_path, 'a = "pod"\nb = "pod"', copied))


def test_a_played_pod_is_told_the_witness_by_its_service_s_name_on_the_run_s_port(tmp_path: Path):
    from types import SimpleNamespace

    from handoff.containers.engine import Engine
    from handoff.hosts.container import ContainerSetup
    from handoff.hosts.played import PlayedPodHost

    setup = ContainerSetup(Engine("podman"), "localhost/worker:1", "handoff-1-net", "10.213.4.1:9", tmp_path,
                           tmp_path, lan=SimpleNamespace(gateway="10.213.4.1"))
    host = PlayedPodHost("a", setup, "handoff-1-s", "s")
    assert host.witness_url("http://10.213.4.1:41234") == f"http://{pod.WITNESS_NAME}:41234"
    assert host.home(tmp_path / "home-shared") == pod.HOME
    assert host.on_simulated_lan and not host.carries_environment and host.has_own_runtime


def test_the_witness_s_tokens_become_a_podman_secret_its_deployment_reads_by_the_run_s_name():
    import base64

    from handoff.export import k8s
    from handoff.hosts.kube_play import playable_witness

    scenario = scenario_files.load(scenario_files.available()["cross-pod-claim"])
    objects = k8s.manifests(scenario, "registry.example/copilot-handoff:1")
    exported = next(item for item in objects if item["metadata"]["name"] == k8s.WITNESS_TOKENS)
    witness = playable_witness(objects, "handoff-1-x", "localhost/worker:1", SOFTWARE)
    (name, content), = witness.secrets.items()
    assert name == f"handoff-1-x-{k8s.WITNESS_TOKENS}"
    assert {key: base64.b64decode(value).decode() for key, value in json.loads(content).items()} == \
        exported["stringData"]
    (container,) = witness.deployment["spec"]["template"]["spec"]["containers"]
    [reference] = [variable["valueFrom"]["secretKeyRef"] for variable in container["env"] if "valueFrom" in variable]
    assert reference == {"name": name, "key": "tokens.json"}
    assert container["command"][0] == "python3.11" and container["image"] == "localhost/worker:1"
    assert container["workingDir"] == "/tmp"
    assert witness.deployment["metadata"]["name"] == f"handoff-1-x-{k8s.WITNESS_NAME}"
    assert witness.container == f"handoff-1-x-{k8s.WITNESS_NAME}-pod-0-witness"
    assert all(volume["name"].startswith("handoff-1-x-") for volume in
               witness.deployment["spec"]["template"]["spec"]["volumes"])
    kubernetes_validate.validate(witness.deployment, kubernetes_validate.latest_version(), strict=True)
