"""What a worker gives the SDK as its model, per path (worker/model.py): a BYOK provider
or the Copilot service. A step that leaves out the provider shows what is not stored
with a session: on BYOK that is everything (no endpoint, no key); on the Copilot API only
the model is left out, since the token and the service are the client's own."""

from __future__ import annotations

import pytest

from handoff.protocol import COPILOT, WITNESS, WITNESS_COPILOT_API, Backend
from handoff.worker.model import model_source
from handoff.worker.sdk import NO_TRUST_ROOT, CopilotService, Provider

URL = "http://10.0.0.1:4000"
TAGS = {"x-handoff-step": "B"}


def test_byok_gives_the_witness_as_a_provider_and_nothing_without_it():
    source = model_source(Backend(WITNESS, "handoff-witness"), URL, TAGS)
    assert isinstance(source, Provider) and source.base_url == f"{URL}/v1" and source.headers == TAGS
    assert model_source(Backend(WITNESS, "handoff-witness"), URL, TAGS, without_provider=True) is None


def test_the_copilot_api_keeps_the_service_and_token_and_leaves_out_only_the_model():
    backend = Backend(WITNESS_COPILOT_API, "claude-haiku-4.5")
    given = model_source(backend, URL, TAGS, token="gho_step")
    left_out = model_source(backend, URL, TAGS, token="gho_step", without_provider=True)
    for source in (given, left_out):
        assert isinstance(source, CopilotService)
        assert (source.github_token, source.api_url, source.headers) == ("gho_step", URL, TAGS)
    assert given.model == "claude-haiku-4.5" and left_out.model == ""
    with pytest.raises(ValueError):
        model_source(backend, URL, TAGS)  # no token: the witness would refuse every request


def test_the_real_service_without_its_settings_keeps_the_token_as_the_witness_s_does(monkeypatch):
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "gho_users_own")
    backend = Backend(COPILOT, "claude-haiku-4.5", token_env="COPILOT_GITHUB_TOKEN")
    given, left_out = model_source(backend), model_source(backend, without_provider=True)
    assert (given.model, given.github_token, given.api_url) == ("claude-haiku-4.5", "gho_users_own", None)
    assert (left_out.model, left_out.github_token) == ("", "gho_users_own")


def test_a_changed_model_is_one_the_path_answers_to():
    from handoff.witness.copilot_api import MODELS
    from handoff.worker.model import second_model

    assert second_model(Backend(WITNESS_COPILOT_API, MODELS[0]), MODELS[0]) in MODELS[1:]  # the service lists it
    assert second_model(Backend(WITNESS, "handoff-witness"), "handoff-witness") == "handoff-witness-second"


MACHINE = {"PATH": "/usr/bin", "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt", "SSL_CERT_DIR": "/etc/ssl/certs",
           "GH_TOKEN": "gho_users_own"}


def test_a_runtime_that_speaks_only_plain_http_reads_no_trust_store():
    # Every address of the witness's paths is http://: the runtime verifies no certificate,
    # and is spared reading the machine's trust store for each HTTP client it builds.
    witness_paths = (model_source(Backend(WITNESS, "handoff-witness"), URL, TAGS),
                     model_source(Backend(WITNESS_COPILOT_API, "claude-haiku-4.5"), URL, TAGS, token="gho_step"))
    for source in witness_paths:
        env = source.environment(dict(MACHINE))
        assert env["SSL_CERT_FILE"] == str(NO_TRUST_ROOT) and "SSL_CERT_DIR" not in env and env["PATH"] == "/usr/bin"
    assert "GH_TOKEN" not in witness_paths[1].environment(dict(MACHINE))  # only the token the witness issued


def test_a_runtime_that_may_speak_tls_keeps_the_machine_s_trust_store(monkeypatch):
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "gho_users_own")
    real_service = model_source(Backend(COPILOT, "claude-haiku-4.5", token_env="COPILOT_GITHUB_TOKEN"))
    hosted = Provider("https://api.example.com/v1", "some-model", {})
    for source in (real_service, hosted):
        assert source.environment(dict(MACHINE)) == MACHINE


def test_the_trust_store_given_holds_one_certificate():
    # Not empty: the runtime in the worker image fails every turn with no trust root at all.
    assert NO_TRUST_ROOT.read_text().count("BEGIN CERTIFICATE") == 1
