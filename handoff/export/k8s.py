"""`handoff export k8s SCENARIO`: the Kubernetes manifests a scenario maps onto.

A cluster runs the same worker the container hosts run, with the coordinator's part done
by whoever applies the manifests (a person with kubectl, or a CI job):

* each **step** is a ``Job`` with one pod and no retry (a retried step would be a second
  worker, another scenario): ``python -m handoff.worker --spec FILE`` reads its spec, the
  same WorkerSpec a container gets on stdin, from a ``Secret`` mounted as a file (a Secret,
  not a ConfigMap, because a store URL may carry a password). A step's objects are
  hosts/pod.py's, which a played rung plays with podman (hosts/played.py);
* the **session id** is fixed when the manifests are made, so the relay the coordinator
  does between steps is the order in which the Jobs are applied: one after the other,
  each when the previous one has completed;
* the **home**: ``shared`` is a ``PersistentVolumeClaim`` every step mounts (it needs a
  ReadWriteMany storage class when the pods land on different nodes), ``own`` and
  ``anonymous`` an ``emptyDir``, which lives as long as the pod; with ``store = "postgres"`` the session files go to the
  PostgreSQL server given with ``--store`` (a managed one, typically) and homes are empty;
* the **witness** model is a ``Deployment`` with a ``Service``, which the workers reach by
  its cluster name. On the Copilot API's path (the default, the lab's) each step gets a
  token of its own, made here: the step's Secret carries it, and the witness reads every
  token, with the principal and the tags the step's requests are to be read with, from a
  ``Secret`` of its own (the coordinator of a run has the witness issue them instead,
  coordinator/credentials.py). On BYOK (``--backend witness-byok``) a step's requests
  carry its tags as headers, and there are no tokens.

What has no place in a static set of manifests is refused, naming the reason: a step that
restarts a container, a copied home, an id the runtime chooses (the coordinator reads it
from the first worker's events), fault points (the coordinator kills the worker there),
tampering, a SQLite file store, the guard (its ids are minted with a key of the run's),
a runtime or SDK version other than the image's.
The image is the Containerfile's ``standalone`` target, pushed to a registry the cluster
pulls from (``--image``).

The tests check the manifests against the Kubernetes API schemas (the
``kubernetes-validate`` package); the played rungs run each step's objects with ``podman
kube play``. Nothing here has run on a real cluster.
"""

from __future__ import annotations

import hashlib
import json
import shlex

import yaml

from handoff.coordinator.credentials import made_ahead
from handoff.coordinator.scenario_run import new_session_id
from handoff.coordinator.specs import worker_spec
from handoff.errors import UserError
from handoff.fact import Fact
from handoff.hosts import pod
from handoff.hosts.pod import LABEL, WITNESS_NAME, WITNESS_PORT, PodHost, dns_label
from handoff.printable import one_line
from handoff.protocol import DEFAULT_RUN_BACKEND, WITNESS, WITNESS_COPILOT_API, Backend, WorkerSpec
from handoff.scenario import Scenario, Step
from handoff.scenario_files import cluster_refusal
from handoff.witness import copilot_api
from handoff.witness.tags import TOKENS_VARIABLE
from handoff.words import HomeKind, StepSession, StoreKind

WITNESS_TOKENS = f"{WITNESS_NAME}-tokens"  # the Secret of the tokens the witness accepts (the Copilot API's path)


def _told_apart(name: str, original: str) -> str:
    """``name`` with a hash of the step's own name at its end, within the 63 characters."""
    return f"{name[:56].rstrip('-')}-{hashlib.sha256(original.encode()).hexdigest()[:6]}"


def step_names(scenario: Scenario) -> dict[str, tuple[str, str]]:
    """Each step's Job name and ``step`` label in the cluster. Names map onto what
    Kubernetes allows (lowercase, '-', 63 characters), so two steps can map onto one
    (``A`` and ``a``, ``tell_step`` and ``tell-step``, names alike in their first 63
    characters): those are told apart by a hash of their own names. Two objects of one
    kind and name would replace each other, and a label two Jobs share would apply both."""
    jobs = {step.name: dns_label(scenario.name, step.name) for step in scenario.steps}
    labels = {step.name: dns_label(step.name) for step in scenario.steps}
    clashing = {step for step in jobs if list(jobs.values()).count(jobs[step]) > 1
                or list(labels.values()).count(labels[step]) > 1}
    names = {step: (_told_apart(jobs[step], step), _told_apart(labels[step], step)) if step in clashing
             else (jobs[step], labels[step]) for step in jobs}
    for index in (0, 1):
        taken = [pair[index] for pair in names.values()]
        if len(set(taken)) < len(taken):  # a hash that met another step's name: no guess at a third
            raise UserError(f"{scenario.name} cannot be exported to Kubernetes: its steps' names map onto one name "
                            f"there ({', '.join(sorted(jobs))}); rename a step")
    return names


def _labels(scenario: Scenario, **more: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": LABEL, f"{LABEL}/scenario": dns_label(scenario.name), **more}


def manifests(scenario: Scenario, image: str, fact: Fact = Fact(), store_url: str | None = None,
              backend: Backend = DEFAULT_RUN_BACKEND) -> list[dict]:
    """The scenario's objects: the witness, the shared home if any, then per step its spec
    and its Job, in the order they are to be applied. ``backend``: the witness as the
    Copilot API (a token per step) or as a BYOK provider."""
    if backend.kind not in (WITNESS, WITNESS_COPILOT_API):
        raise UserError(f"{scenario.name} cannot be exported to Kubernetes with that backend: a cluster's steps ask "
                        f"the witness, as the Copilot API (--backend witness) or as a BYOK provider (witness-byok)")
    problem = cluster_refusal(scenario)
    if problem:
        raise UserError(f"{scenario.name} cannot be exported to Kubernetes: {problem}")
    if scenario.store == StoreKind.POSTGRES and not store_url:
        raise UserError(f"{scenario.name} keeps sessions in PostgreSQL: give the cluster's server with "
                        "--store postgresql://user:password@host:5432/db")
    session_id = scenario.session_id or new_session_id()
    names = step_names(scenario)
    steps: list[dict] = []
    holders: dict[str, copilot_api.Holder] = {}
    for step in scenario.steps:
        given = session_id if step.session == StepSession.PASSED else new_session_id()
        spec, token = made_ahead(_spec(scenario, step, fact, store_url, given, backend))
        holders.update(token)
        steps += _step(scenario, step, image, spec, *names[step.name])
    objects = _witness(scenario, image, holders)
    if scenario.store == StoreKind.HOME and any(step.home == HomeKind.SHARED for step in scenario.steps):
        objects.append(pod.claim(dns_label(scenario.name, "home"), _labels(scenario, **{f"{LABEL}/role": "home"})))
    return objects + steps


def _spec(scenario: Scenario, step: Step, fact: Fact, store_url: str | None, session_id: str,
          backend: Backend) -> WorkerSpec:
    host = PodHost(step.host)
    return worker_spec(scenario.name, step, host, pod.HOME, session_id, fact=fact, backend=backend, runtime_path="",
                       witness_url=host.witness_url(""),
                       store_url=store_url if scenario.store == StoreKind.POSTGRES else None)


def _step(scenario: Scenario, step: Step, image: str, spec: WorkerSpec, job: str, label: str) -> list[dict]:
    labels = _labels(scenario, **{f"{LABEL}/step": label, f"{LABEL}/host": dns_label(step.host)})
    shared = scenario.store == StoreKind.HOME and step.home == HomeKind.SHARED
    return pod.step_objects(spec.to_json().decode(), image, job, labels, dns_label(scenario.name, "home") if shared else None)


def _witness(scenario: Scenario, image: str, holders: dict[str, copilot_api.Holder]) -> list[dict]:
    """The witness's Deployment and Service; on the Copilot API's path first the Secret of
    the tokens it accepts, which its container reads from the environment (never the
    command line, which anyone on the node can read)."""
    labels = _labels(scenario, **{f"{LABEL}/role": "witness"})
    selector = {f"{LABEL}/role": "witness", f"{LABEL}/scenario": labels[f"{LABEL}/scenario"]}
    container = {"name": "witness", "image": image,
                 "command": ["python", "-m", "handoff.witness", "--host", "0.0.0.0", "--port", str(WITNESS_PORT),
                             "--evidence", "/var/log/handoff/evidence.jsonl"],
                 "ports": [{"containerPort": WITNESS_PORT}],
                 "volumeMounts": [{"name": "evidence", "mountPath": "/var/log/handoff"}]}
    tokens = []
    if holders:
        container["env"] = [{"name": TOKENS_VARIABLE,
                             "valueFrom": {"secretKeyRef": {"name": WITNESS_TOKENS, "key": "tokens.json"}}}]
        tokens = [{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                   "metadata": {"name": WITNESS_TOKENS, "labels": labels},
                   "stringData": {"tokens.json": json.dumps({token: copilot_api.given(holder)
                                                             for token, holder in holders.items()}, indent=1)}}]
    return [
        *tokens,
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": WITNESS_NAME, "labels": labels, "annotations": {f"{LABEL}/title": scenario.title}},
         "spec": {"replicas": 1, "selector": {"matchLabels": selector},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [container], "volumes": [{"name": "evidence", "emptyDir": {}}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": WITNESS_NAME, "labels": labels},
         "spec": {"selector": selector, "ports": [{"port": WITNESS_PORT, "targetPort": WITNESS_PORT}]}},
    ]


def render(scenario: Scenario, objects: list[dict], file: str = "FILE") -> str:
    """The manifests as one YAML stream, headed by the commands that apply them in order."""
    # Comments hold only what the tool made of checked names, and the file's path with every
    # control character escaped: text of the scenario's (its title) goes into the objects,
    # where the YAML library writes it as data (the witness's title annotation).
    selector = f"{LABEL}/scenario={dns_label(scenario.name)}"
    file = one_line(shlex.quote(str(file)))
    lines = [f"# {dns_label(scenario.name)}: see the annotation {LABEL}/title for its title",
             f"# Made by `handoff export k8s {scenario.name}`; not run on a cluster by this project.",
             "# Apply the witness (and the shared home's claim) first, then each step, each after the previous",
             "# step's Job has completed (that order is the coordinator's id relay):",
             f"#   kubectl apply -f {file} -l {selector},{LABEL}/role=witness"]
    if any(item["kind"] == "PersistentVolumeClaim" for item in objects):
        lines.append(f"#   kubectl apply -f {file} -l {selector},{LABEL}/role=home")
    for item in objects:
        if item["kind"] == "Job":
            step = item["metadata"]["labels"][f"{LABEL}/step"]
            lines.append(f"#   kubectl apply -f {file} -l {selector},{LABEL}/step={step} && "
                         f"kubectl wait --for=condition=complete --timeout=300s job/{item['metadata']['name']}")
    lines.append("# A step's events are its pod's log: kubectl logs job/<name>.")
    return "\n".join(lines) + "\n" + yaml.dump_all(objects, Dumper=_PlainDumper, sort_keys=False, width=120)


class _PlainDumper(yaml.SafeDumper):
    """Every object written out in full: no &anchors and *aliases for repeated labels."""

    def ignore_aliases(self, data) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    """Multi-line text (a step's spec) as a readable block, not one escaped line."""
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_PlainDumper.add_representer(str, _text)
