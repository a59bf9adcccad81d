"""Backend choice: validated up front, secrets referred to by name, failures explained."""

from __future__ import annotations

import pytest

from handoff import backends
from handoff.backends import Backend, choose, explain
from handoff.errors import UserError
from handoff.protocol import WITNESS, WITNESS_COPILOT_API, WITNESS_MODEL

TOKEN = "github_pat_UNIT_TEST_TOKEN_0123"


def test_witness_is_the_default_and_needs_nothing():
    assert choose("witness", None, None, None, environ={}) == Backend("witness-copilot-api", "")


@pytest.mark.parametrize("variable", backends.TOKEN_VARIABLES)
def test_copilot_takes_the_token_from_any_supported_variable(variable):
    chosen = choose("copilot", None, None, None, environ={variable: TOKEN})
    assert chosen == Backend("copilot", "claude-haiku-4.5", token_env=variable)
    assert TOKEN not in repr(chosen) + chosen.describe()
    assert chosen.secret_env({variable: TOKEN}) == {variable: TOKEN}


def test_copilot_prefers_copilot_github_token_like_the_runtime():
    environ = {"GITHUB_TOKEN": "a", "GH_TOKEN": "b", "COPILOT_GITHUB_TOKEN": "c"}
    assert choose("copilot", "gpt-5-mini", None, None, environ=environ).token_env == "COPILOT_GITHUB_TOKEN"


@pytest.mark.parametrize("environ", [{}, {"GH_TOKEN": "  "}])
def test_copilot_without_a_token_says_how_to_get_one(environ):
    with pytest.raises(UserError, match=r"needs a GitHub token: set COPILOT_GITHUB_TOKEN .*gh auth token"):
        choose("copilot", None, None, None, environ=environ)


def test_openai_compatible_keeps_the_variable_name_not_the_key():
    chosen = choose("openai-compatible", "llama3.2", "http://localhost:11434/v1/", "OLLAMA_KEY",
                    environ={"OLLAMA_KEY": "sk-1"})
    assert chosen == Backend("openai-compatible", "llama3.2", provider_url="http://localhost:11434/v1", api_key_env="OLLAMA_KEY")
    assert "sk-1" not in repr(chosen) + chosen.describe()


@pytest.mark.parametrize("kind, model, url, key_env, environ, message", [
    ("ollama", None, None, None, {}, "--backend ollama: choose one of witness, witness-byok, copilot, openai-compatible"),
    ("witness", " ", None, None, {}, "--model must not be empty"),
    ("witness", None, "http://h/v1", None, {}, "--provider-url is for --backend openai-compatible"),
    ("copilot", None, None, "K", {"GH_TOKEN": "t"}, "--api-key-env is for --backend openai-compatible"),
    ("openai-compatible", "m", None, None, {}, "needs --provider-url"),
    ("openai-compatible", "m", "localhost:11434", None, {}, "the scheme must be http or https"),
    ("openai-compatible", "m", "http://localhost:99999/v1", None, {}, "the port is out of range (1-65535)"),
    ("openai-compatible", "m", "http://[::1/v1", None, {}, "malformed"),
    ("openai-compatible", None, "http://h/v1", None, {}, "needs --model NAME"),
    ("openai-compatible", "m", "http://h/v1", "UNSET_KEY", {}, "--api-key-env UNSET_KEY: that variable is not set"),
    ("openai-compatible", "m", "http://h/v1", "sk-live-abc", {}, "takes the NAME of an environment variable"),
])
def test_bad_options_are_one_line_user_errors(kind, model, url, key_env, environ, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")) as raised:
        choose(kind, model, url, key_env, environ=environ)
    assert "\n" not in str(raised.value)


def test_a_key_given_in_place_of_its_variable_is_not_echoed():
    with pytest.raises(UserError) as raised:
        choose("openai-compatible", "m", "http://h/v1", "sk-live-abc", environ={})
    assert "sk-live-abc" not in str(raised.value)


REFUSED = ("Authentication failed with provider at http://h/v1 (HTTP 401). "
           "Check your COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_API_KEY_COMMAND, or COPILOT_PROVIDER_BEARER_TOKEN.")


def test_a_refused_key_names_the_variable_to_check():
    backend = Backend("openai-compatible", "m", provider_url="http://h/v1", api_key_env="MY_KEY")
    assert explain(backend, REFUSED) == ("the endpoint http://h/v1 refused the API key from $MY_KEY (HTTP 401): "
                                        "check that variable's value (it is not shown)")


def test_a_refused_request_without_a_key_says_to_pass_one():
    backend = Backend("openai-compatible", "m", provider_url="http://h/v1")
    assert "pass --api-key-env VAR" in explain(backend, REFUSED)


def test_a_refused_copilot_token_names_its_variable():
    backend = Backend("copilot", "claude-haiku-4.5", token_env="GH_TOKEN")
    assert explain(backend, "Request failed (HTTP 403)").startswith("the GitHub Copilot service refused the token from $GH_TOKEN")


def test_an_unreachable_endpoint_points_at_provider_url():
    backend = Backend("openai-compatible", "m", provider_url="http://h:9/v1")
    message = "Could not connect to local model provider at http://h:9/v1. Check that the service is running."
    assert explain(backend, message) == "cannot reach the endpoint http://h:9/v1: is it running, and is --provider-url right?"


def test_other_errors_are_not_the_backends():
    backend = Backend("witness", "handoff-witness")
    assert explain(backend, "Failed to load session events: Session not found: x") is None


def test_doctor_view_names_the_variable_only():
    rows = {kind: (usable, detail) for kind, usable, detail, _ in backends.configured({"GH_TOKEN": TOKEN})}
    assert rows["copilot"] == (True, "token present in $GH_TOKEN (not checked: that needs the service)")
    assert rows["witness"][0] is rows["witness-byok"][0] is True and rows["openai-compatible"][0] is None
    assert {kind: usable for kind, usable, _, _ in backends.configured({})}["copilot"] is False


def test_a_token_check_that_never_reached_github_is_not_called_a_refusal():
    backend = Backend("copilot", "claude-haiku-4.5", token_env="GH_TOKEN")
    message = ("Authentication failed: Failed to validate SDK token: network fetch failed: request failed: "
               "error sending request for url (https://api.github.com/copilot_internal/user)")
    assert explain(backend, message).startswith("cannot reach the GitHub Copilot service")


def test_the_relay_failing_to_reach_the_endpoint_points_at_provider_url():
    backend = Backend("openai-compatible", "m", provider_url="http://h:9/v1")
    assert explain(backend, "the handoff relay could not reach http://h:9/v1: refused (HTTP 502)").startswith(
        "cannot reach the endpoint http://h:9/v1")


def test_secrets_are_scrubbed_from_messages():
    backend = Backend("openai-compatible", "m", provider_url="http://h/v1", api_key_env="MY_KEY")
    assert backend.scrub("bad key sk-123 given", {"MY_KEY": "sk-123"}) == "bad key *** given"


def test_only_the_copilot_service_is_judged_on_answers_alone():
    assert Backend("witness", "handoff-witness").seen_on_the_wire
    assert Backend("openai-compatible", "m", provider_url="http://h/v1").seen_on_the_wire
    assert not Backend("copilot", "claude-haiku-4.5", token_env="GH_TOKEN").seen_on_the_wire


def test_preflight_names_an_endpoint_that_is_not_there():
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago, and nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = Backend("openai-compatible", "m", provider_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(UserError, match=rf"--provider-url http://127.0.0.1:{port}/v1: cannot reach it"):
        backends.preflight(backend, environ={})


def test_preflight_leaves_the_other_backends_alone():
    backends.preflight(Backend("copilot", "claude-haiku-4.5", token_env="GH_TOKEN"), environ={})
    backends.preflight(Backend("witness", "handoff-witness"), environ={})


def test_witness_is_the_copilot_api_and_witness_byok_is_byok():
    from handoff.protocol import DEFAULT_RUN_BACKEND
    from handoff.witness.copilot_api import MODELS

    assert choose("witness", None, None, None, {}) == Backend(WITNESS_COPILOT_API, "")  # the lab: list_models picks
    run = choose("witness", None, None, None, {}, api_model=DEFAULT_RUN_BACKEND.model)
    assert run == DEFAULT_RUN_BACKEND and run.model in MODELS  # a run names one the witness lists
    assert choose("witness", "gpt-5-mini", None, None, {}, api_model="x").model == "gpt-5-mini"
    assert choose("witness-byok", None, None, None, {}, api_model="x") == Backend(WITNESS, WITNESS_MODEL)
    assert Backend(WITNESS_COPILOT_API, "").seen_on_the_wire


def test_the_lab_picks_its_model_as_the_sample_does_and_never_auto_by_accident():
    from handoff.lab.copilot_path import pick_model

    assert pick_model(["auto", "claude-haiku-4.5", "gpt-5-mini"], "") == "claude-haiku-4.5"
    assert pick_model(["auto", "gpt-5-mini", "o3"], "") == "gpt-5-mini"
    assert pick_model(["auto", "claude-haiku-4.5", "gpt-5-mini"], "gpt-5-mini") == "gpt-5-mini"
    with pytest.raises(UserError, match="--model x: the service offers no such model; it offers a, b"):
        pick_model(["auto", "a", "b"], "x")
    with pytest.raises(UserError, match="lists no model"):
        pick_model(["auto"], "")
