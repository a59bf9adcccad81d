"""A step's cluster objects made playable by ``podman kube play``: one small transformation.

A played step (hosts/played.py) runs exactly the Secret and Job that `handoff export k8s`
writes for it (hosts/pod.py), changed only where podman 4.3 or the local image cannot
take them as written:

* **the Job becomes a Pod** with the Job's pod template: podman ignores Jobs;
* **the spec's Secret becomes a ConfigMap** with the same data, mounted the same way:
  podman 4.3 crashes on a volume from a Secret (``VolumeFromSecret`` is given no secrets
  manager);
* **the witness's Service becomes a name in the pod's /etc/hosts** (``hostAliases``):
  what a cluster's DNS does, which podman does not;
* **names are the run's** (``handoff-<owner>...``), volumes' too: podman names an
  ``emptyDir``'s volume by the volume's name alone, so two pods' ``user`` would be one
  volume; and `handoff clean` finds what a killed run left by that prefix. The pod's
  hostname is short (``pod-a-1``), as a container host's is, where a cluster's would be
  the pod's name;
* **the image is the local worker image**, which holds Debian and Python only (imported,
  not built: there is no registry here). The project's code, its Python packages and the
  runtime are mounted read-only from this machine, as for the container hosts, and the
  container is told where they are (``PATH``, ``PYTHONPATH``, ``COPILOT_CLI_PATH``, which the
  cluster's image sets itself); its ``python`` is the image's ``python3.11``.

Everything else (the command and its arguments, the spec, the mounts, labels, resources)
is as exported: that is what a played rung checks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from handoff.hosts.pod import WITNESS_NAME

PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Software:
    """What the cluster's image holds and the local one is given from this machine."""

    mounts: tuple[tuple[str, str], ...]  # (here, there), mounted read-only
    python: str  # the image's interpreter, for the cluster image's ``python``
    python_path: str
    runtime: str  # the runtime's executable, as mounted


def playable(objects: list[dict], pod_name: str, hostname: str, image: str, software: Software,
             witness_address: str) -> list[dict]:
    """The step's ConfigMap and Pod, to be played in that order. ``objects``: its Secret
    and Job as exported; ``hostname``: the pod's, short where its name is long;
    ``witness_address``: where the witness's Service name leads."""
    secret = copy.deepcopy(next(item for item in objects if item["kind"] == "Secret"))
    job = copy.deepcopy(next(item for item in objects if item["kind"] == "Job"))
    spec_map = f"{pod_name}-spec"
    config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": spec_map, "labels": secret["metadata"]["labels"]},
                  "data": secret["stringData"]}
    template = job["spec"]["template"]
    spec = template["spec"]
    volume_names = {volume["name"]: f"{pod_name}-{volume['name']}" for volume in spec["volumes"]}
    for volume in spec["volumes"]:
        volume["name"] = volume_names[volume["name"]]
        if volume.get("secret", {}).get("secretName") == secret["metadata"]["name"]:
            del volume["secret"]
            volume["configMap"] = {"name": spec_map}
    for index, (here, _there) in enumerate(software.mounts):
        spec["volumes"].append({"name": f"{pod_name}-software-{index}", "hostPath": {"path": here, "type": "Directory"}})
    for container in spec["containers"]:
        container["image"] = image
        if container["command"][:1] == ["python"]:
            container["command"] = [software.python, *container["command"][1:]]
        container["env"] = [*container.get("env", []), {"name": "PATH", "value": PLAIN_PATH},
                            {"name": "PYTHONPATH", "value": software.python_path},
                            {"name": "COPILOT_CLI_PATH", "value": software.runtime}]
        for mount in container.get("volumeMounts", []):
            mount["name"] = volume_names[mount["name"]]
        container["volumeMounts"] = [*container.get("volumeMounts", []),
                                     *({"name": f"{pod_name}-software-{index}", "mountPath": there, "readOnly": True}
                                       for index, (_here, there) in enumerate(software.mounts))]
    spec["hostAliases"] = [{"ip": witness_address, "hostnames": [WITNESS_NAME]}]
    spec["hostname"] = hostname
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod_name, "labels": template["metadata"]["labels"]},
           "spec": spec}
    return [config_map, pod]


def container_name(pod_name: str, container: str) -> str:
    """What podman names a pod's container."""
    return f"{pod_name}-{container}"
