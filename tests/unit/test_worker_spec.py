"""A WorkerSpec carries secret values only for workers that cannot get them otherwise,
and never shows them."""

from __future__ import annotations

from handoff.protocol import Backend, WorkerSpec


def _spec(**extra) -> WorkerSpec:
    return WorkerSpec(scenario="s", step="B", host="b", runtime_path="", home="~/h", witness_url="http://x:1",
                      fact_value="v", fact_topic="t", actions=("resume", "ask"), **extra)


def test_secrets_travel_in_the_json_but_not_in_the_repr():
    spec = _spec(backend=Backend("openai-compatible", "m", api_key_env="KEY"), secrets={"KEY": "sk-do-not-show"})
    assert "sk-do-not-show" not in repr(spec)
    assert WorkerSpec.from_json(spec.to_json()).secrets == {"KEY": "sk-do-not-show"}
    assert _spec().secrets == {}


def test_a_backend_names_only_its_own_secret_variables():
    environ = {"KEY": "sk-1", "OTHER": "x", "COPILOT_GITHUB_TOKEN": "gho-2"}
    assert Backend("openai-compatible", "m", "http://e/v1", api_key_env="KEY").secret_env(environ) == {"KEY": "sk-1"}
    assert Backend("copilot", "m", token_env="COPILOT_GITHUB_TOKEN").secret_env(environ) == {"COPILOT_GITHUB_TOKEN": "gho-2"}
    assert Backend("witness", "m").secret_env(environ) == {}


def test_an_empty_secrets_field_is_left_out_of_the_json():
    assert b"secrets" not in _spec().to_json()
    assert WorkerSpec.from_json(_spec().to_json()).secrets == {}


def test_a_worker_error_never_repeats_the_key(monkeypatch):
    from handoff.worker.__main__ import _without_secrets

    monkeypatch.setenv("KEY", "sk-from-env")
    spec = _spec(backend=Backend("openai-compatible", "m", api_key_env="KEY"), secrets={"KEY": "sk-from-spec"})
    assert _without_secrets("refused sk-from-env and sk-from-spec", spec) == "refused *** and ***"
