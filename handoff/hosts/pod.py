"""A step as a Kubernetes cluster runs it: the objects of one step, and the pod as a host.

`handoff export k8s` (export/k8s.py) writes these for a cluster, and a played rung
(hosts/played.py) plays the same objects with ``podman kube play``: a step is a ``Job``
with one pod and no retry, whose worker reads its spec from a ``Secret`` mounted as a file
(a Secret, not a ConfigMap: a store URL may carry a password); its home is the shared
home's ``PersistentVolumeClaim``, or an ``emptyDir`` that lives as long as the pod; the
witness is reached by its Service's name.
"""

from __future__ import annotations

import json
import re

from handoff.hosts.base import Host, Launch
from handoff.protocol import SPEC_OPTION
from handoff.words import HostKind

WITNESS_NAME = "handoff-witness"  # the witness's Service: the name a step's worker reaches it by
WITNESS_PORT = 8080
HOME = "/mnt/home"
USER = "/mnt/user"  # the image's working directory and the worker's HOME
SPEC_DIR = "/etc/handoff"
SPEC_FILE = "spec.json"
WORKER = "worker"  # the step's container
LABEL = "copilot-handoff"
# What a worker and its runtime need (capacity.py: a peak of 330-500 MiB was measured).
RESOURCES = {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}


class PodHost(Host):
    """A pod of a cluster, as a host for the worker's spec: it has its own runtime (the
    image's) and gets no environment of ours. The cluster starts it, never this tool."""

    kind = HostKind.POD
    carries_environment = False
    has_own_runtime = True

    async def start_worker(self, tracker, store, stderr, cwd, launch: Launch = Launch()):
        raise RuntimeError("a cluster's pods are started by applying the manifests, not by handoff run")

    def home(self, store) -> str:
        return HOME

    def witness_url(self, url: str) -> str:
        return f"http://{WITNESS_NAME}:{WITNESS_PORT}"


def dns_label(*parts: str) -> str:
    """An RFC 1123 label (what Kubernetes names must be): lowercase, digits, '-', at most 63."""
    text = re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")
    return text[:63].rstrip("-")


def claim(name: str, labels: dict[str, str]) -> dict:
    """The shared home: a claim every step's pod mounts (ReadWriteMany: the pods may land
    on different nodes)."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "labels": labels},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}}


def step_objects(spec_json: str, image: str, job: str, labels: dict[str, str], home_claim: str | None) -> list[dict]:
    """The step's Secret (its spec, indented to be read) and Job; ``home_claim``: the
    claim it mounts as its home (None: an emptyDir)."""
    home = {"persistentVolumeClaim": {"claimName": home_claim}} if home_claim else {"emptyDir": {}}
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": f"{job}-spec", "labels": labels},
              "stringData": {SPEC_FILE: json.dumps(json.loads(spec_json), indent=1)}}
    worker = {
        "name": WORKER, "image": image,
        # The whole file (indented JSON): stdin would give the worker its first line only.
        "command": ["python", "-m", "handoff.worker", SPEC_OPTION, f"{SPEC_DIR}/{SPEC_FILE}"],
        "env": [{"name": "HOME", "value": USER}, {"name": "TMPDIR", "value": "/tmp"}],
        "resources": RESOURCES,
        "volumeMounts": [{"name": "home", "mountPath": HOME}, {"name": "user", "mountPath": USER},
                         {"name": "spec", "mountPath": SPEC_DIR, "readOnly": True}],
    }
    pod = {"restartPolicy": "Never", "containers": [worker],
           "volumes": [{"name": "home", **home}, {"name": "user", "emptyDir": {}},
                       {"name": "spec", "secret": {"secretName": f"{job}-spec"}}]}
    return [secret, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": job, "labels": labels},
                     "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels}, "spec": pod}}}]
