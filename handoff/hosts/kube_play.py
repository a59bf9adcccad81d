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

The witness's Deployment is made playable the same way (its tokens' Secret as a podman
secret made beforehand, which ``secretKeyRef`` reads: podman takes no Secret from the
file); the played rungs' steps are told the run's witness, and a test plays this one.
"""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import dataclass

from handoff.hosts.pod import LABEL, WITNESS_NAME

PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"
SCRATCH = "/tmp"


@dataclass(frozen=True)
class Software:
    """What the cluster's image holds and the local one is given from this machine."""

    mounts: tuple[tuple[str, str], ...]  # (here, there), mounted read-only
    python: str  # the image's interpreter, for the cluster image's ``python``
    python_path: str
    runtime: str  # the runtime's executable, as mounted


@dataclass(frozen=True)
class PlayableWitness:
    """The exported witness made playable: podman secrets to make first, then the Deployment."""

    secrets: dict[str, str]  # name -> content: a JSON map of each key to its base64 value
    deployment: dict

    @property
    def container(self) -> str:
        """What podman names the witness's container: its one pod is ``<deployment>-pod-0``."""
        return container_name(f"{self.deployment['metadata']['name']}-pod-0",
                              self.deployment["spec"]["template"]["spec"]["containers"][0]["name"])


def playable_witness(objects: list[dict], prefix: str, image: str, software: Software) -> PlayableWitness:
    """The witness's objects of an export (its Deployment, and on the Copilot API's path
    the Secret of its tokens), made playable as a step's are: names with ``prefix``, the
    local image with the software, and the Secret as a podman secret made beforehand,
    which ``secretKeyRef`` reads (podman takes no Secret from the file). The Service has
    nothing to play: a step pod's host alias stands for it."""
    deployment = copy.deepcopy(next(item for item in objects if item["kind"] == "Deployment"))
    secrets = {item["metadata"]["name"]: item for item in objects
               if item["kind"] == "Secret" and item["metadata"]["labels"].get(f"{LABEL}/role") == "witness"}
    deployment["metadata"]["name"] = f"{prefix}-{deployment['metadata']['name']}"
    spec = deployment["spec"]["template"]["spec"]
    for volume in spec.get("volumes", []):
        for mount in (m for c in spec["containers"] for m in c.get("volumeMounts", []) if m["name"] == volume["name"]):
            mount["name"] = f"{prefix}-{volume['name']}"
        volume["name"] = f"{prefix}-{volume['name']}"
    _with_software(spec, prefix, image, software)
    for container in spec["containers"]:
        container["workingDir"] = SCRATCH  # the imported image lacks its WORKDIR, which nothing here mounts
        for variable in container.get("env", []):
            reference = variable.get("valueFrom", {}).get("secretKeyRef")
            if reference:
                reference["name"] = f"{prefix}-{reference['name']}"
    made = {f"{prefix}-{name}": json.dumps({key: base64.b64encode(value.encode()).decode()
                                           for key, value in secret["stringData"].items()})
            for name, secret in secrets.items()}
    return PlayableWitness(made, deployment)


def playable(objects: list[dict], pod_name: str, hostname: str, image: str, software: Software,
             witness_address: str) -> list[dict]:
    """The step's ConfigMap and Pod, to be played in that order. ``objects``: its Secret
    and Job as exported; ``hostname``: the pod's, short where its name is long;
    ``witness_address``: where the witness's Service name leads."""
    secret = copy.deepcopy(next(item for item in objects if item["kind"] == "Secret"))
    job = copy.deepcopy(next(item for item in objects if item["kind"] == "Job"))
    config_map = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": spec_map(pod_name), "labels": secret["metadata"]["labels"]},
                  "data": secret["stringData"]}
    template = job["spec"]["template"]
    spec = template["spec"]
    volume_names = {volume["name"]: f"{pod_name}-{volume['name']}" for volume in spec["volumes"]}
    for volume in spec["volumes"]:
        volume["name"] = volume_names[volume["name"]]
        if volume.get("secret", {}).get("secretName") == secret["metadata"]["name"]:
            del volume["secret"]
            volume["configMap"] = {"name": spec_map(pod_name)}
    for container in spec["containers"]:
        for mount in container.get("volumeMounts", []):
            mount["name"] = volume_names[mount["name"]]
    _with_software(spec, pod_name, image, software)
    spec["hostAliases"] = [{"ip": witness_address, "hostnames": [WITNESS_NAME]}]
    spec["hostname"] = hostname
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod_name, "labels": template["metadata"]["labels"]},
           "spec": spec}
    return [config_map, pod]


def _with_software(spec: dict, prefix: str, image: str, software: Software) -> None:
    """The local image for every container of a pod spec, with what the cluster's image
    holds mounted read-only and the container told where it is."""
    for index, (here, _there) in enumerate(software.mounts):
        spec.setdefault("volumes", []).append({"name": f"{prefix}-software-{index}",
                                               "hostPath": {"path": here, "type": "Directory"}})
    for container in spec["containers"]:
        container["image"] = image
        if container["command"][:1] == ["python"]:
            container["command"] = [software.python, *container["command"][1:]]
        container["env"] = [*container.get("env", []), {"name": "PATH", "value": PLAIN_PATH},
                            {"name": "PYTHONPATH", "value": software.python_path},
                            {"name": "COPILOT_CLI_PATH", "value": software.runtime}]
        container["volumeMounts"] = [*container.get("volumeMounts", []),
                                     *({"name": f"{prefix}-software-{index}", "mountPath": there, "readOnly": True}
                                       for index, (_here, there) in enumerate(software.mounts))]


def spec_map(pod_name: str) -> str:
    """The ConfigMap that holds a played pod's spec; podman names its volume so too."""
    return f"{pod_name}-spec"


def container_name(pod_name: str, container: str) -> str:
    """What podman names a pod's container."""
    return f"{pod_name}-{container}"
