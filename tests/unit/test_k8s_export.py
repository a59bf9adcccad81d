"""`handoff export k8s`: every scenario that maps onto a cluster gives manifests the
Kubernetes API schemas accept; the others are refused with the reason."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from typer.testing import CliRunner

from handoff import scenario_files
from handoff.cli import app
from handoff.errors import UserError
from handoff.export import k8s
from handoff.fact import Fact
from handoff.protocol import WITNESS, WITNESS_COPILOT_API, Backend, WorkerSpec
from handoff.witness import copilot_api
from handoff.witness.evidence import read_evidence
from handoff.witness.server import make_server
from handoff.witness.tags import TOKENS_VARIABLE
from tests.unit.test_witness_step_tokens import chat

STORE = "postgresql://handoff:secret@db.example:5432/handoff"
IMAGE = "registry.example/copilot-handoff:1"


def exportable() -> list[str]:
    return [name for name, path in scenario_files.available().items() if scenario_files.cluster_refusal(scenario_files.load(path)) is None]


def test_most_scenarios_map_onto_a_cluster():
    names = exportable()
    assert {"cross-container-volume", "cross-container-postgres", "cross-container-nothing-shared",
            "cross-process", "cross-machine-postgres"} <= set(names)
    assert "container-restart-anonymous-volume" not in names and "crash-after-turn" not in names


@pytest.mark.parametrize("name", exportable())
def test_the_manifests_pass_the_kubernetes_schemas(name):
    loaded = scenario_files.load(scenario_files.available()[name])
    text = k8s.render(loaded, k8s.manifests(loaded, IMAGE, Fact(), STORE))
    documents = list(yaml.safe_load_all(text))
    assert documents and all(documents)
    for document in documents:
        kubernetes_validate.validate(document, kubernetes_validate.latest_version(), strict=True)
    jobs = [d for d in documents if d["kind"] == "Job"]
    assert [j["metadata"]["labels"]["copilot-handoff/step"] for j in jobs] == [s.name.lower() for s in loaded.steps]
    _no_two_objects_alike(documents)


def _no_two_objects_alike(documents: list[dict]) -> None:
    """No two objects of one kind and name (one would replace the other), and no step
    label two Jobs share (applying one step would apply both)."""
    named = [(d["kind"], d["metadata"]["name"]) for d in documents]
    assert len(set(named)) == len(named), named
    steps = [d["metadata"]["labels"]["copilot-handoff/step"] for d in documents if d["kind"] == "Job"]
    assert len(set(steps)) == len(steps), steps


LONG = "x" * 30


@pytest.mark.parametrize("first, second", [("A", "a"), ("tell_step", "tell-step"), (f"{LONG}-one", f"{LONG}-two")])
def test_steps_whose_names_map_onto_one_cluster_name_get_names_of_their_own(tmp_path, first, second):
    path = tmp_path / f"{'long-scenario-name-' * 3}"[:40].rstrip("-").__add__(".toml")  # 40 characters at most
    steps = "".join(f'[[steps]]\nname = "{name}"\nactions = {actions}\n' for name, actions in
                    ((first, '["create", "tell", "close"]'), (second, '["resume", "ask", "close"]\nexpect = "kept"')))
    head = (Path(scenario_files.available()["cross-process"]).read_text().split("[[steps]]")[0]
            .replace("Cross process", "Two steps alike"))
    path.write_text(head + steps)
    loaded = scenario_files.load(path)
    documents = list(yaml.safe_load_all(k8s.render(loaded, k8s.manifests(loaded, IMAGE, Fact(), STORE))))
    _no_two_objects_alike(documents)
    for document in documents:
        kubernetes_validate.validate(document, kubernetes_validate.latest_version(), strict=True)


def test_each_step_gets_the_worker_spec_with_the_id_passed_along():
    loaded = scenario_files.load(scenario_files.available()["cross-container-postgres"])
    documents = k8s.manifests(loaded, IMAGE, Fact("Champions", "customer tier"), STORE)
    specs = _specs(documents)
    assert [spec.step for spec in specs] == ["A", "B"]
    assert specs[0].session_id == specs[1].session_id
    assert {spec.store for spec in specs} == {STORE} and {spec.fact_value for spec in specs} == {"Champions"}
    assert {spec.witness_url for spec in specs} == {f"http://{k8s.WITNESS_NAME}:{k8s.WITNESS_PORT}"}
    assert specs[0].runtime_path == ""  # the image's own runtime (COPILOT_CLI_PATH in the standalone target)
    job = next(d for d in documents if d["kind"] == "Job")
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_a_shared_home_is_a_claim_every_step_mounts_and_own_homes_are_the_pods():
    shared = k8s.manifests(scenario_files.load(scenario_files.available()["cross-container-volume"]), IMAGE)
    claims = [d["metadata"]["name"] for d in shared if d["kind"] == "PersistentVolumeClaim"]
    mounted = [v["persistentVolumeClaim"]["claimName"] for d in shared if d["kind"] == "Job"
               for v in d["spec"]["template"]["spec"]["volumes"] if v["name"] == "home"]
    assert claims == ["cross-container-volume-home"] and mounted == claims * 2
    own = k8s.manifests(scenario_files.load(scenario_files.available()["cross-container-nothing-shared"]), IMAGE)
    assert not [d for d in own if d["kind"] == "PersistentVolumeClaim"]


@pytest.mark.parametrize("name, words", [
    ("container-restart-anonymous-volume", "restarts a container"),
    ("crash-after-turn", "fault point"),
    ("tamper", "is guarded: the coordinator mints its ids"),
    ("device-handoff", "is done in a browser .device 'laptop'., which no Job of a cluster drives"),
    ("crash-during-write", "fault point"),
    ("cross-machine-copied-state", "copies between steps"),
    ("no-id", "lets the runtime choose the id"),
    ("resume-on-old-runtime", "step 'B' names runtime 1.0.40: the image holds the default runtime and SDK only"),
])
def test_what_needs_the_coordinator_is_refused_with_the_reason(name, words):
    with pytest.raises(UserError, match=words):
        k8s.manifests(scenario_files.load(scenario_files.available()[name]), IMAGE)


def test_the_command_writes_the_file_and_names_what_is_missing(tmp_path):
    runner = CliRunner()
    out = tmp_path / "volume.yaml"
    done = runner.invoke(app, ["export", "k8s", "cross-container-volume", "--image", IMAGE, "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert f"kubectl apply -f {out}" in out.read_text() and IMAGE in out.read_text()
    missing = runner.invoke(app, ["export", "k8s", "cross-container-postgres"])
    assert missing.exit_code == 2 and "--store postgresql://" in missing.output
    unknown = runner.invoke(app, ["export", "k8s", "nope"])
    assert unknown.exit_code == 2 and "unknown scenario 'nope'" in unknown.output
    for backend in ("copilot", "witnes"):  # the real service's token would go into a manifest; a typo
        other = runner.invoke(app, ["export", "k8s", "cross-process", "--backend", backend])
        assert other.exit_code == 2 and f"--backend {backend}: choose one of witness, witness-byok" in other.output


def test_the_store_password_is_only_in_the_secrets():
    loaded = scenario_files.load(scenario_files.available()["cross-container-postgres"])
    documents = k8s.manifests(loaded, IMAGE, Fact(), STORE)
    assert all("secret@" not in json.dumps(d) for d in documents if d["kind"] != "Secret")


def test_the_schemas_do_refuse_a_wrong_manifest():
    """The check above can fail: a field the API does not know, in strict mode, is an error."""
    job = next(d for d in k8s.manifests(scenario_files.load(scenario_files.available()["cross-process"]), IMAGE) if d["kind"] == "Job")
    job["spec"]["template"]["spec"]["containers"][0]["imageName"] = IMAGE  # a field no container has
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, kubernetes_validate.latest_version(), strict=True)


INJECTED = ('t\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: pwn\n'
            'roleRef: {kind: ClusterRole, name: cluster-admin}\n# ')


def test_a_title_or_file_name_with_line_breaks_stays_data_and_adds_no_object():
    """A scenario's title once went raw into a YAML comment: line breaks in it made a
    whole ClusterRoleBinding, carrying the labels the printed `kubectl apply -l` selects."""
    import dataclasses

    loaded = dataclasses.replace(scenario_files.load(scenario_files.available()["cross-process"]), title=INJECTED)
    objects = k8s.manifests(loaded, IMAGE, Fact(), STORE)
    text = k8s.render(loaded, objects, file="out.yaml\nkind: ClusterRoleBinding")
    parsed = [item for item in yaml.safe_load_all(text) if item]
    assert [item["kind"] for item in parsed] == [item["kind"] for item in objects]
    assert "ClusterRoleBinding" not in [item["kind"] for item in parsed]
    witness = next(item for item in parsed if item["kind"] == "Deployment")
    assert witness["metadata"]["annotations"][f"{k8s.LABEL}/title"] == INJECTED
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert all("ClusterRoleBinding" not in line or "\\x0a" in line for line in comments)


def _specs(documents: list[dict]) -> list[WorkerSpec]:
    return [WorkerSpec.from_json(d["stringData"]["spec.json"].encode()) for d in documents
            if d["kind"] == "Secret" and "spec.json" in d["stringData"]]


def test_on_the_copilot_api_s_path_each_step_has_a_token_the_witness_reads_with_the_step_s_tags(tmp_path):
    """The default path, the lab's: no coordinator issues tokens in a cluster, so each
    step's is made with the manifests; the witness reads them all, with each step's
    principal and tags, from a Secret, and a request with a step's token is that step's."""
    path = tmp_path / "two-tokens.toml"
    head = (Path(scenario_files.available()["cross-container-volume"]).read_text().split("[[steps]]")[0])
    path.write_text(head + '[[steps]]\nname = "A"\nhost = "a"\nprincipal = "alice"\nactions = ["create", "tell", "close"]\n'
                    '[[steps]]\nname = "B"\nhost = "b"\nprincipal = "bob"\nactions = ["resume", "ask", "close"]\n'
                    'expect = "kept"\n')
    loaded = scenario_files.load(path)
    documents = k8s.manifests(loaded, IMAGE)
    specs = _specs(documents)
    assert {spec.backend.kind for spec in specs} == {WITNESS_COPILOT_API}
    tokens = [spec.witness_token for spec in specs]
    assert len(set(tokens)) == len(specs) and all(token.startswith(copilot_api.TOKEN_PREFIX) for token in tokens)
    [secret] = [d for d in documents if d["metadata"]["name"] == k8s.WITNESS_TOKENS]
    assert documents.index(secret) < [d["kind"] for d in documents].index("Deployment")  # applied before it
    assert secret["metadata"]["labels"][f"{k8s.LABEL}/role"] == "witness"  # with it, by the same selector
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    [witness] = deployment["spec"]["template"]["spec"]["containers"]
    assert witness["env"] == [{"name": TOKENS_VARIABLE, "valueFrom": {"secretKeyRef": {
        "name": k8s.WITNESS_TOKENS, "key": "tokens.json"}}}]
    holders = copilot_api.holders(secret["stringData"]["tokens.json"])
    assert {token: holder.principal for token, holder in holders.items()} == {
        spec.witness_token: spec.owner for spec in specs}
    assert {spec.owner for spec in specs} == {"alice", "bob"}
    for spec in specs:
        assert dict(holders[spec.witness_token].tags) == spec.tags
        holding = [d["metadata"]["name"] for d in documents if spec.witness_token in json.dumps(d)]
        assert holding == [k8s.WITNESS_TOKENS, f"two-tokens-{spec.step.lower()}-spec"]  # no other step's Secret

    evidence = tmp_path / "evidence.jsonl"
    served = make_server("127.0.0.1", 0, evidence, tokens=holders)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{served.server_address[1]}"
        for spec in specs:
            assert chat(url, spec.witness_token, Fact().remember_prompt) == 200  # none of the step's headers
        assert chat(url, copilot_api.new_token(), "hi") == 401
    finally:
        served.shutdown()
        served.server_close()
    seen = read_evidence(evidence)
    assert [(s.scenario, s.step, s.principal, s.fact_sent) for s in seen] == [
        (loaded.name, spec.step, spec.owner, True) for spec in specs]


def test_on_byok_a_step_has_no_token_and_the_witness_no_tokens():
    loaded = scenario_files.load(scenario_files.available()["cross-process"])
    documents = k8s.manifests(loaded, IMAGE, backend=Backend(WITNESS))
    assert {(spec.backend.kind, spec.witness_token) for spec in _specs(documents)} == {(WITNESS, "")}
    assert not [d for d in documents if d["metadata"]["name"] == k8s.WITNESS_TOKENS]
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    assert "env" not in deployment["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("given", ['[]', '{"t": 1}', '{"t": ""}', '{"t": {"principal": "a", "tags": {"x": 1}}}',
                                   '{"t": {"principal": "a", "more": 1}}', '{"": "a"}', 'not json'])
def test_the_witness_refuses_tokens_it_cannot_read(given):
    assert copilot_api.holders(given) is None
